// Package audit writes the audit log (--audit-log): one JSON line per
// tools/call, prompts/get and resources/read of a host, written when the
// request ends, whatever the end, with its arguments masked and bounded.
//
// It is a package of its own because the file outlives any one relay: a
// process holding many relays (a daemon, or tests) must have one writer per
// file, and two processes (two `mcpsandbox run` given one --audit-log) must
// not misrotate it. Open hands every relay of a process asking for one path
// the same writer (reference-counted); the writer appends and rotates under
// an exclusive flock(2) on the file itself, so processes take turns, and
// each checks after taking the lock that the file it holds is still the one
// at the path (another may have rotated it) and reopens when it is not. No
// line is written into a file already rotated away, and a full file is
// rotated once, by whichever process first finds it full.
//
// A tap (Config.Tap) is given each line as it is made, with or without a
// file: the daemon keeps a server's lines for `mcpsandbox logs`.
//
// The package is told plain values (the method, the raw params, an outcome,
// a code, byte counts) and knows nothing of the relay's types.
//
// A writer goroutine behind a bounded queue writes the file, so a slow disk
// (or a process holding the lock) costs dropped lines, counted and reported
// in a line of their own, never a stalled relay.
package audit
