package supervisor

// JSON-RPC error codes mcpsandbox answers host requests with. They sit in
// the implementation-defined server-error range (-32000..-32099) and are
// stable: hosts and scripts may match on them. Each error's data object
// carries "reason" (what happened, e.g. "exited with status 2" or "hang: no
// answer to 3 pings") and, where it applies, "generation" (the server
// process, counted from 1).
const (
	// CodeServerCrashed answers requests that were in flight when the server
	// process died or was killed as hung. mcpsandbox is restarting it; the
	// host may retry the request.
	CodeServerCrashed = -32001
	// CodeServerStopped answers requests while the server is down for good:
	// it crash-looped (--max-restarts within --restart-window), exited with
	// --restart never (or exited cleanly with on-failure), could not be
	// started at all, failed at start for a reason of its confinement (a
	// path not granted, a read-only grant, no network: never restarted,
	// the message names the setting that fixes it), or mcpsandbox is
	// shutting down. The message says which.
	CodeServerStopped = -32002
	// CodeMessageTooLarge answers a request that was longer than
	// --max-message, or whose response from the server was.
	CodeMessageTooLarge = -32003
	// CodeQueueFull answers a request that arrived while the server was
	// restarting and the queue of held host messages was full.
	CodeQueueFull = -32004
	// CodeInvalidResponse answers a request whose response from the server
	// was not valid JSON-RPC (it went to the log instead).
	CodeInvalidResponse = -32005
	// CodeServerRequestRefused answers, to the server, a request of its to
	// the host that mcpsandbox will not track: 1024 of its requests are
	// already waiting for the host's answer, or its id is longer than 256
	// bytes. The host never sees it.
	CodeServerRequestRefused = -32006
	// CodePolicyDenied answers a request the policy's MCP rules forbid, e.g.
	// a tools/call of a tool --deny-tool hides (or --allow-tool leaves out).
	// It never reached the server.
	CodePolicyDenied = -32007
	// CodeCallTimeout answers a tools/call the server did not answer within
	// --call-timeout; the server got notifications/cancelled for it.
	CodeCallTimeout = -32008
	// CodeRateLimited answers a tools/call over the tool's --rate-limit;
	// data has the limit ("5/1m") and retryAfterMs. It never reached the
	// server.
	CodeRateLimited = -32009
	// CodeTooManyCalls answers a tools/call while --max-concurrent-calls
	// calls are in flight already: it is refused at once, not queued, and
	// never reached the server; data has the limit.
	CodeTooManyCalls = -32010
)

// Standard JSON-RPC codes mcpsandbox answers malformed host input (and an
// unknown prefixed tool) with.
// (The heartbeat's -32601 lives in package healthcheck.)
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602 // MCP's answer to a tools/call of an unknown tool
)
