// Package probe lists everything a server tells the model, once, from a
// process of its own: `mcpsandbox upgrade` starts a candidate version in a
// probe sandbox (no network, no secrets, an empty state directory, a short
// timeout) and compares what this returns with the lock's approved
// contract before anything of the candidate reaches a host.
//
// It is a room of its own, beside the relay and reused by nothing in it:
// the relay carries a host's session and never speaks for one, while the
// probe is a host, a short one that initializes, pages every list to its
// end and hangs up. It speaks JSON-RPC through the project's own wire code
// (package jsonrpc), starts the process as the supervisor starts any
// (supervisor.StartAlone) and knows nothing of locks, registries or hosts'
// files, which the command gives it and takes its answer to.
package probe
