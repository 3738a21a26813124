// Package diagnose says why a confined server failed, from what it printed
// and the facts of its confinement: a start that failed (its stderr) or a
// tool call that failed (its tool error's text), read against the host's
// file system, told apart from a real bug, with the setting that fixes it.
//
// It is a package of its own so that the diagnosis is pure: it is given
// the facts as plain values (the command, the working directory, the
// grants, the network, the environment the policy passes) and the host's
// file system as an interface, takes no lock and reads no global state, so
// the relay can run it outside its lock (the file-system walks take their
// time) and tests can give it a made-up host. The result is a Diagnosis
// that the caller renders with its own names for the settings.
package diagnose
