// Package approval holds the tools/call a policy's approval tiers name
// (--approve-tool, --approve-annotated) until a person allows them, asking
// through the best channel the host has: a 2026-07-28 host that declares
// elicitation gets an input_required result with mcpsandbox's question
// and a signed requestState; an older host that declared elicitation at
// initialize gets mcpsandbox's own elicitation/create while the call
// waits; any other host gets an error naming `mcpsandbox approve ID`, and
// the lock (package lock) keeps the approval. Anything but an explicit
// allow denies.
//
// It is a rule of package supervisor/mcprules, chained inside the policy's
// and the pins' rules, so that it sees the server's own tool names and the
// annotations the server's tools/list results carry; it knows nothing of
// processes, restarts or error codes. A room of its own because it keeps
// state the other rules do not: a signing key, the session's grants, and
// the requestStates already used.
package approval
