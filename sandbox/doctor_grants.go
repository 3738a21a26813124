package sandbox

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
