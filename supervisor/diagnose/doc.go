// Package diagnose says why a confined server failed, from what it printed
// and the facts of its confinement, with the setting that fixes it: a
// start that failed (its stderr, read against the host's file system and
// told apart from a real bug), or a tool call that failed (its tool
// error's text, read against the policy alone: the server writes it, so
// it must not be a way to probe the host). It also writes that hint into
// the result, marked so that nothing of the server's passes for it
// (hintitem.go).
//
// It is a package of its own so that the diagnosis is pure: it is given
// the facts as plain values (the command, the working directory, the
// grants, the network, the environment the policy passes) and the host's
// file system as an interface, takes no lock and reads no global state (but
// a bounded memo of which letters may begin mcpsandbox's name), so
// the relay can run it outside its lock (the file-system walks take their
// time) and tests can give it a made-up host. The result is a Diagnosis
// that the caller renders with its own names for the settings.
package diagnose
