package sandbox

import "fmt"

// checkGrantLocks states a limit no setting lifts: locks need only a
// readable descriptor (flock; an fcntl read lock), so a server can lock any
// file it can read, --ro grants included, and a host program that waits for
// the lock (a database writer, say) waits until the server lets go or ends.
// A lease, which would stall every host open, the seccomp profile refuses.
func checkGrantLocks() Check {
	return Check{Part: "locks on grants",
		Detail: "a server can hold flock and fcntl read locks on files it can read, --ro grants included; a host program waiting for one waits until the server ends",
		Fix:    "stop the server to free them; grant a file host programs lock for writing (a database) only to servers you let block them"}
}

// checkGrantSockets states what the masking of sockets in grants leaves
// open (grants_sockets.go): sockets made after the start, and those the
// bounded search did not reach.
func checkGrantSockets() Check {
	return Check{Part: "sockets in grants",
		Detail: fmt.Sprintf("unix sockets host programs listen on in --rw and --ro grants at a server's start are masked "+
			"(searched breadth first, up to %d entries and %d levels; policy explain names them and where a search stopped); "+
			"a socket a host program makes in a grant after the start can be connected to: Landlock's scopes (ABI 6) cover abstract sockets and signals, not sockets at paths",
			socketSearchLimit, socketSearchDepth),
		Fix: "grant directories host programs make no sockets in, or restart the server once one appears (the next start masks it)"}
}
