package supervisor

// JSON-RPC error codes mcpsandbox answers host requests with. They are
// stable (hosts and scripts may match on them) and sit in one private block,
// -31101..-31113, outside JSON-RPC's reserved -32768..-32000: MCP
// 2026-07-28 forbids new codes in -32000..-32099, and the older -32001..
// -32010 collided with what SDK clients decode themselves (the Go SDK reads
// -32003/-32004 as a closed connection, Swift -32000/-32001 as transport
// errors, -32002 was "resource not found"). No SDK, the spec or a common
// gateway uses -31002..-31999 (DESIGN.md §12). Each error's data object
// carries "source": "mcpsandbox", a stable "kind" (codeKinds), "reason"
// (for people: e.g. "exited with status 2" or "hang: no answer to 3
// pings") and, where it applies, "generation" (the server process, counted
// from 1), "limit" and "retryAfterMs".
const (
	// CodeServerCrashed answers requests that were in flight when the server
	// process died or was killed as hung. mcpsandbox is restarting it; the
	// host may retry the request.
	CodeServerCrashed = -31101
	// CodeServerStopped answers requests while the server is down for good:
	// it crash-looped (--max-restarts within --restart-window), exited with
	// --restart never (or exited cleanly with on-failure), could not be
	// started at all, failed at start for a reason of its confinement (a
	// path not granted, a read-only grant, no network: never restarted,
	// the message names the setting that fixes it), or mcpsandbox is
	// shutting down. The message says which.
	CodeServerStopped = -31102
	// CodeMessageTooLarge answers a request that was longer than
	// --max-message, or whose response from the server was.
	CodeMessageTooLarge = -31103
	// CodeQueueFull answers a request that arrived while the server was
	// restarting and the queue of held host messages was full.
	CodeQueueFull = -31104
	// CodeInvalidResponse answers a request whose response from the server
	// was not valid JSON-RPC (it went to the log instead).
	CodeInvalidResponse = -31105
	// CodeServerRequestRefused answers, to the server, a request of its to
	// the host that mcpsandbox will not track: 1024 of its requests are
	// already waiting for the host's answer, or its id is longer than 256
	// bytes; or that its policy refuses (--server-elicitation and the like
	// deny it, it is over --server-request-limit, or it is a URL-mode
	// elicitation to a host not on --allow-host). The host never sees it.
	CodeServerRequestRefused = -31106
	// CodePolicyDenied answers a request the policy's MCP rules forbid, e.g.
	// a tools/call of a tool --deny-tool hides (or --allow-tool leaves out).
	// It never reached the server.
	CodePolicyDenied = -31107
	// CodeCallTimeout answers a tools/call the server did not answer within
	// --call-timeout; the server got notifications/cancelled for it.
	CodeCallTimeout = -31108
	// CodeRateLimited answers a tools/call over the tool's --rate-limit;
	// data has the limit ("5/1m") and retryAfterMs. It never reached the
	// server.
	CodeRateLimited = -31109
	// CodeTooManyCalls answers a tools/call while --max-concurrent-calls
	// calls are in flight already: it is refused at once, not queued, and
	// never reached the server; data has the limit.
	CodeTooManyCalls = -31110
	// CodeServerUnavailable answers a request when no instance of the
	// server can be had: no mcpsandbox daemon is running (connect), the
	// daemon has no server of that name, the client's uid is not among
	// the server's users, or the server is at its max-instances. The
	// reason says which and how to fix it. It never reached a server.
	CodeServerUnavailable = -31111
	// CodeStartTimeout answers the host's initialize (or stateless
	// server/discover) that the server did not answer within
	// --start-timeout. The message names the hosts the server tried that
	// its policy does not allow, with the --allow-host for each (also in
	// data.deniedHosts), or says that it did not answer in time. The server
	// keeps running, supervised as before; its late answer is dropped.
	CodeStartTimeout = -31112
	// CodeHeld answers a tools/call, prompts/get or resources/read of an
	// item the lock holds for approval: new or changed since the server
	// was pinned (data.reason "new", "changed"), or any item of a server
	// the lock does not pin under pin mode strict ("unpinned"). data.item
	// names it ("tool:write_file"); the message names the commands that
	// show and approve it (mcpsandbox pins diff NAME, pins approve NAME
	// ITEM). It never reached the server.
	CodeHeld = -31113
	// CodeApprovalRequired answers a tools/call that waits for a person and
	// that mcpsandbox cannot ask about through the host: data.approvalId
	// names what `mcpsandbox approve ID` takes, data.expires when it lapses.
	// The call was not relayed; the host retries it once approved.
	CodeApprovalRequired = -31114
	// CodeApprovalDenied answers a tools/call a person declined or
	// cancelled, or that no one approved in time (data.reason says which).
	CodeApprovalDenied = -31115
	// CodeSecretInArguments answers a tools/call whose arguments carry what
	// looks like a secret: data.path names where, data.secret its format,
	// never its value. The call was not relayed.
	CodeSecretInArguments = -31116
)

// errorSource names mcpsandbox as the sender in data.source, so a host can
// tell its errors from a server's that reuse the numbers.
const errorSource = "mcpsandbox"

// codeKinds is data.kind for each of mcpsandbox's codes: the same words as
// the audit log's outcomes.
var codeKinds = map[int]string{
	CodeServerCrashed:        "server-crashed",
	CodeServerStopped:        "server-stopped",
	CodeMessageTooLarge:      "too-large",
	CodeQueueFull:            "queue-full",
	CodeInvalidResponse:      "invalid-response",
	CodeServerRequestRefused: "request-refused",
	CodePolicyDenied:         "denied",
	CodeCallTimeout:          "timeout",
	CodeRateLimited:          "rate-limited",
	CodeTooManyCalls:         "too-many-calls",
	CodeServerUnavailable:    "server-unavailable",
	CodeStartTimeout:         "start-timeout",
	CodeHeld:                 "held",
	CodeApprovalRequired:     "approval-required",
	CodeApprovalDenied:       "approval-denied",
	CodeSecretInArguments:    "secret-in-arguments",
}

// withKind gives the data of one of mcpsandbox's own errors its source and
// kind (a reason too, if it had none); other codes' data is left alone.
func withKind(code int, data any) any {
	kind, ok := codeKinds[code]
	if !ok {
		return data
	}
	d, _ := data.(errorData)
	d.Source, d.Kind = errorSource, kind
	if d.Reason == "" {
		d.Reason = kind
	}
	return d
}

// UnavailableResponse is the newline-terminated answer to a host request
// (raw id) for which no server instance can be had (CodeServerUnavailable):
// message for the host's user, reason saying why and what fixes it.
func UnavailableResponse(id []byte, message, reason string) []byte {
	return errorResponse(id, CodeServerUnavailable, message, errorData{Reason: reason})
}
