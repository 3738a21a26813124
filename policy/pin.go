package policy

// Pin modes: what mcpsandbox does with a server the lock does not pin yet.
const (
	PinTOFU   = "tofu"   // pin what the first session lists (trust on first use)
	PinStrict = "strict" // refuse a server the lock does not pin
	PinOff    = "off"    // compare and log, never hold or refuse
)
