package supervisor

import (
	"bytes"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// relayPrefix marks ids that mcpsandbox made up: its own requests to the
// server (pings, replayed initialize) and the ids it gives server→host
// requests. Host ids that happen to use it are remapped.
const relayPrefix = "mcpsandbox:"

var quotedRelayPrefix = []byte(`"` + relayPrefix)

// isRelayID reports whether a raw id token is in the reserved namespace.
func isRelayID(raw []byte) bool { return bytes.HasPrefix(raw, quotedRelayPrefix) }

// quoteID makes a raw JSON string id token from its contents (which never
// need escaping: relay ids are ASCII without quotes or backslashes).
func quoteID(s string) []byte { return []byte(`"` + s + `"`) }

// errorData is the data member of mcpsandbox's own errors.
type errorData struct {
	Source     string `json:"source,omitempty"` // "mcpsandbox" (withKind)
	Kind       string `json:"kind,omitempty"`   // codeKinds
	Reason     string `json:"reason"`
	Generation int    `json:"generation,omitempty"`
	Limit      string `json:"limit,omitempty"`
	// RetryAfterMs is when a rate-limited call would be let through.
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
	// DeniedHosts are hosts the server tried that its policy does not
	// allow (the message names the --allow-host for each).
	DeniedHosts []string `json:"deniedHosts,omitempty"`
	// Item is the item held for approval (CodeHeld), as users name it.
	Item string `json:"item,omitempty"`
	// ApprovalID is what `mcpsandbox approve ID` takes, Expires (RFC
	// 3339) when it lapses (CodeApprovalRequired).
	ApprovalID string `json:"approvalId,omitempty"`
	Expires    string `json:"expires,omitempty"`
	// Path is where the arguments carry a secret, Secret its format,
	// never its value (CodeSecretInArguments).
	Path   string `json:"path,omitempty"`
	Secret string `json:"secret,omitempty"`
}

// errorResponse builds a newline-terminated error response for a raw id,
// giving mcpsandbox's own codes their source and kind (withKind).
func errorResponse(id []byte, code int, message string, data any) []byte {
	return jsonrpc.NewError(id, code, message, withKind(code, data))
}

// withNewParams returns msg (whose envelope is e) with its params replaced
// by params, and where its id now lies: the relay then rewrites the id in
// the message it will send.
func withNewParams(msg []byte, e *jsonrpc.Envelope, params []byte) (out []byte, idStart, idEnd int) {
	start := jsonrpc.OffsetIn(msg, e.Params)
	out = jsonrpc.Splice(msg, start, start+len(e.Params), params)
	idStart, idEnd = e.IDStart, e.IDEnd
	if idStart > start {
		shift := len(params) - len(e.Params)
		idStart, idEnd = idStart+shift, idEnd+shift
	}
	return out, idStart, idEnd
}
