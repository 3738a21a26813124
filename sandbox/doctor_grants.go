package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

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

// checkRootGrants says what becomes of a root-owned grant as root
// (idmap_root.go), and whether a directory made in the temporary directory
// takes the idmapped mount that lending needs (a fresh directory: a
// directory with submounts is idmapped only if every one of them can be).
func checkRootGrants(root bool) Check {
	c := Check{Part: "root-owned grants", OK: true}
	if !root {
		c.Detail = "servers run as you: a grant is used with your permissions"
		return c
	}
	c.Detail = "a root-owned grant the server's uid could not use as it stands is idmapped: root is shown as the server and what it writes lands as root's " +
		"(set-ID modes refused; lent only under {Seccomp} default without {SeccompLog}); one it can use as it stands keeps root's files closed"
	where, fs, err := probeIDMapIn(os.TempDir())
	if err != nil {
		c.OK = false
		c.Detail += "; here " + where + " cannot be idmapped: " + err.Error()
		c.Fix = "grant directories on a file system with idmapped mounts (ext4, xfs, btrfs; tmpfs on Linux 6.3+), or chown them to the user the server should act as"
		return c
	}
	c.Detail += "; here " + where + " (" + fs + ") takes idmapped mounts"
	return c
}

// probeIDMapIn probes a fresh directory made in parent, and removes it.
func probeIDMapIn(parent string) (where, fs string, err error) {
	dir, err := os.MkdirTemp(parent, "mcpsandbox-doctor-")
	if err != nil {
		return parent, "", err
	}
	defer os.Remove(dir)
	fd, err := openNoSymlinks(unix.AT_FDCWD, dir, 0)
	if err != nil {
		return parent, "", err
	}
	defer unix.Close(fd)
	return parent, fsName(fd), probeIDMap(fd)
}
