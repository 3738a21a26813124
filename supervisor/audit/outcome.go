package audit

// Outcome says how an audited request ended: the "outcome" of its line.
type Outcome string

// Every way a host request can end. The strings are the audit log's format
// (docs/policy.md lists them): do not change them.
const (
	Answered          Outcome = "ok"                  // the server answered with a result
	ToolError         Outcome = "tool-error"          // a tools/call result with isError: true
	Error             Outcome = "error"               // a JSON-RPC error, from the server or (an unknown prefixed tool) mcpsandbox
	Denied            Outcome = "denied"              // the policy's MCP rules refused it
	Timeout           Outcome = "timeout"             // a tools/call over the call timeout
	RateLimited       Outcome = "rate-limited"        // a tools/call over its tool's rate limit
	TooManyCalls      Outcome = "too-many-calls"      // a tools/call over the concurrent-call limit
	ServerCrashed     Outcome = "server-crashed"      // the server died or hung during it
	ServerStopped     Outcome = "server-stopped"      // the server is down for good, or mcpsandbox is stopping
	TooLarge          Outcome = "too-large"           // it, or its answer, was over the message size limit
	QueueFull         Outcome = "queue-full"          // too many messages held while the server restarts
	InvalidResponse   Outcome = "invalid-response"    // the server's answer was not JSON-RPC every host parses
	Held              Outcome = "held"                // an item the lock holds for approval (its line names it: held)
	ApprovalRequired  Outcome = "approval-required"   // a call that waits for mcpsandbox approve ID (its line's approval.id)
	ApprovalDenied    Outcome = "approval-denied"     // a call a person declined, or no one approved in time (approval.decision)
	SecretInArguments Outcome = "secret-in-arguments" // arguments that carry a secret (its line's path and secret)
	StartTimeout      Outcome = "start-timeout"       // an initialize or server/discover over the start timeout (never audited: its word for data.kind)
	Cancelled         Outcome = "cancelled"           // the host sent notifications/cancelled for it
	HostGone          Outcome = "host-gone"           // the host left before the answer
	IDReused          Outcome = "id-reused"           // the host sent another request under its id while it was in flight
)
