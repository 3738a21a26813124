// Package supervisor keeps a host's MCP session alive across the life and
// death of the server processes behind it: it relays JSON-RPC exactly, pings
// the server, restarts it on crash or hang and replays the session onto the
// new process. Run supervises one server for one host connection through
// one relay, the type a daemon holding many servers would reuse.
//
// # Relay
//
// One message per '\n'-terminated line, at most --max-message bytes (default
// 16 MiB) before the newline. A longer line is discarded as it streams in,
// never held whole; its first 4 KiB and last 512 bytes are kept to find its
// id. Messages are not decoded: a single-pass scanner (package jsonrpc,
// which frames the lines too) validates each line as JSON and finds the
// top-level id (kept as raw bytes, never a float), the method and whether
// it carries a result or an error. Rewriting an id splices bytes. Batches (protocol 2025-03-26) pass through with every id tracked.
//
// Lines on the server's stdout that are not JSON-RPC never reach the host
// (one would end a Go SDK host's session); they are logged. Nor do messages
// some host could not parse: nested over 100 deep, or with invalid UTF-8 or
// unpaired surrogate escapes in a string. If such a line still names a host
// request in flight (its id read before the fault, or closing the line),
// that request is answered with CodeInvalidResponse; if it is a request of
// the server with an id, the server gets the JSON-RPC error for it under
// that id (-32600, or -32700 for one no host could parse). The id of an
// oversized message is looked for while it streams past, wherever it sits.
// The server's stderr is logged line by line ("server stderr", with the
// server name and generation; blank lines left out, each cut at 512 bytes)
// and its last 64 KiB are kept for crash reports.
//
// Log records a server causes are rate-limited per server (1000 per 30 s,
// then counted and reported as suppressed) and every value taken from it is
// cut at 256 bytes with its length noted: a flood makes a bounded log.
// Server→host requests awaiting the host are bounded at 1024 (ids at 256
// bytes); the excess is answered to the server with
// CodeServerRequestRefused, so a crash cancels at most 1024.
//
// # Ids
//
// Host→server ids pass through unchanged, except ids in mcpsandbox's
// reserved namespace (strings starting "mcpsandbox:"), which the server sees
// remapped. mcpsandbox's own requests to the server (ping, the replayed
// initialize, replayed logging/setLevel and resources/subscribe) use that
// namespace and their responses are never relayed. Server→host requests
// reach the host under "mcpsandbox:g<generation>:<n>" and the host's answer
// goes back under the server's own id, so the two id spaces (which both
// count from 0 or 1) cannot collide and an answer can never reach a newer
// process than the one that asked. notifications/cancelled is rewritten to
// match, in both directions. mcpsandbox's own requests to the host (a
// rule's question, mcprules.Host) go out under "mcpsandbox:ask:<n>": the
// host's answer is taken on the host's side and never reaches the server,
// and the server side never looks such an id up, so a server cannot answer
// one.
//
// # The tool-error hint
//
// Beside the ids, the relay changes tools/call results on its own (the MCP
// rules, when set, change what they say): one with isError true whose
// text quotes EROFS, EACCES, ENOENT or "[Errno N]" for a path the policy
// explains (in a read-only grant, a granted path the server's own user
// may not read, a path under one the command line names that is not
// granted; package diagnose decides from the policy alone, never from the
// host, so the server cannot probe the host through it) gets one more
// content item after the server's own, {"type":"text","text":"mcpsandbox:
// ...","_meta":{"io.github.mcpsandbox/hint":true}}, saying what of the
// confinement caused it and which setting fixes it (NoToolHints: never).
// And in every tools/call result, the server's lines that read as
// beginning "mcpsandbox" get "[the server's words] " put before them and
// its items lose that _meta key, so nothing of the server's passes for
// mcpsandbox's. Results with nothing to change are relayed as the server
// wrote them; the parsing runs outside the relay's lock.
//
// # Crash, hang and restart
//
// Everything written to a server process (host messages, refusals,
// cancellations, pings, the replay) goes through one bounded queue that one
// goroutine per process writes, so mcpsandbox never waits on a server that
// stops reading: what the server writes is still relayed, and once 8192
// messages (or twice --max-message bytes) wait for it, it is hung.
//
// The moment a server process exits (or is declared hung: by that queue,
// or by the heartbeat, --ping-failures pings in a row unanswered within
// --ping-timeout; pings start once the server first answered, and a server
// answering ping with -32601 is probed with server/discover in stateless
// sessions or left to process liveness), mcpsandbox stops writing to it, kills what is left of
// its process tree, relays what it wrote before dying, and then answers
// every host request still in flight exactly once with CodeServerCrashed.
// Server→host requests still pending are cancelled towards the host.
//
// Before a server first answers there is no heartbeat: a host's initialize
// (or server/discover) it leaves unanswered for --start-timeout is answered
// with CodeStartTimeout, and the server is left running, to answer late
// (dropped) or be found dead as above. That error, crashes and call
// timeouts name the hosts the server tried that its policy does not allow
// (netdenied.go): under egress the proxy's denials, under none the
// offline resolver's, which answers every name NXDOMAIN.
//
// The restart follows --restart (on-failure by default: a clean exit with
// status 0 ends the session instead) after a backoff that starts at
// --restart-backoff MIN and doubles with each restart inside
// --restart-window, up to MAX. While it restarts, host messages are held in
// order (at most 1024, and --max-message bytes in all; beyond that requests
// get CodeQueueFull) and host pings are answered by mcpsandbox with {}. The
// new process is brought into the session: the host's initialize is replayed
// unchanged under a relay id, its result is swallowed after checking that
// the protocol version is the one negotiated first (a different one fails the
// restart; different capabilities are logged), notifications/initialized is
// sent, the log level and active subscriptions are replayed (and their
// answers awaited: servers handle requests concurrently), the held
// messages are flushed, and the host gets notifications/<list>/list_changed
// for each list the server declared listChanged. A host never sees a second
// initialize reach a process: a repeated one is answered from the cache.
// Stateless 2026-07-28 sessions (server/discover, _meta on every request)
// need no replay. A subscriptions/listen stream open at the crash is not
// answered: as the spec asks, it is re-established, sent to the new process
// under its id, and the new process's acknowledgement (the host has had
// one) is swallowed, so its notifications reach the host's stream.
//
// After --max-restarts failures within --restart-window (a crash loop), or a
// failure under --restart never, the server stays down: every request gets
// CodeServerStopped with the reason, pings still get {}, the server's last
// stderr lines are logged, and mcpsandbox waits for the host to leave.
//
// # MCP rules
//
// The policy's rules on MCP traffic are package mcprules, which the relay
// calls at four points: a host request's arrival, the server's result, the
// server's notifications and the request's end; what a rule keeps of one
// request lives in the mcprules.Call it returned. Only the messages a rule
// concerns are decoded for them, and with no rule set the relay takes no
// step beyond a nil check. The pinned contract (package supervisor/pins,
// when Options.ID names the server) is a rule too, chained inside the
// policy's (mcprules.Chain): the relay knows no pin, and answers its
// refusals with CodeHeld.
//
// A rule may also answer a request in mcpsandbox's name (Verdict.Answer: a
// question the host is to put to its user) or hold it (Verdict.Pending):
// the relay registers a held request as in flight but neither relays it
// nor starts --call-timeout; the rule's Decide runs on a goroutine of its
// own (held.go) with a ctx that ends with the request (the host cancels
// it, the host goes away, the session ends), and may ask the host through
// mcprules.Host. Its decision relays the request once, then starts its
// clock, or ends it with the rule's refusal; a decision that finds the
// request ended is dropped, so the host gets one answer, and a host that
// left while it was asked gets nothing relayed. At most 64 of
// mcpsandbox's own questions await the host at once; a question whose
// request ends is cancelled at the host. The relay learns no approval: it
// answers the kinds with their codes and writes the decision into the
// audit line.
// Tools matching a --deny-tool glob, or none of the --allow-tool globs when
// there are any, are left out of tools/list (other members, nextCursor
// included, kept) and a tools/call of one is answered with CodePolicyDenied
// without reaching the server. With --tool-prefix P the host sees each
// tool as P+name and its tools/call reaches the server under the tool's own
// name (globs match own names; a name without P is an unknown tool,
// -32602). A tools/call unanswered after --call-timeout
// gets CodeCallTimeout; the server gets notifications/cancelled under the
// id it knows (after the call, if it is still held for a restart) and its
// late answer is dropped.
//
// Prompts are allowed and denied by name the same way (--allow-prompt,
// --deny-prompt: prompts/list filtered, prompts/get refused), resources by
// URI (--allow-resource, --deny-resource: resources/list filtered,
// resources/templates/list by uriTemplate, resources/read and
// resources/subscribe refused, notifications/resources/updated dropped);
// completion/complete of a denied prompt or resource is refused too. In a
// URI glob * runs across '/'. While resource rules are set, a URI a server
// might resolve other than as written (a . or .. segment, %2e, %2f or %5c,
// a backslash, an upper-case scheme) is refused as uncheckable.
//
// --rate-limit gives each tool a token bucket (N calls at once, one more
// every DURATION/N; the most specific matching glob sets a tool's limit): a
// call over it gets CodeRateLimited with retryAfterMs. With
// --max-concurrent-calls N, a tools/call while N are registered and not yet
// answered (held for a restart included; a call the host cancelled no
// longer counts) gets CodeTooManyCalls at once: refused, never queued.
// Neither reaches the server, and a refused call takes nothing from the
// other budget.
//
// # Audit log
//
// Every host request ends in one place (endLocked, end.go), whatever ends
// it: the server's answer, one of mcpsandbox's errors, the host's
// cancellation, the host leaving, its id reused. There it leaves the
// request table, gives back its --max-concurrent-calls slot, its
// --call-timeout clock stops, its audit line is written and mcpsandbox's
// answer, if it gives one, is sent: once.
//
// With --audit-log (package audit) each host tools/call, prompts/get and
// resources/read carries an audit record from arrival to its end: one JSON
// line with the outcome, code, duration and bytes, the arguments masked
// and bounded.
// A writer goroutine behind a bounded queue writes the file, so a slow disk
// costs dropped (and counted) lines, never a stalled relay.
//
// # Shutdown
//
// On host EOF, or when ctx is cancelled (SIGTERM/SIGINT in the CLI), the
// server gets what was queued for it, then EOF on stdin; after --grace it
// gets SIGTERM, after another --grace SIGKILL, and then its whole tree is
// killed. On ctx cancellation, requests still in flight are answered with
// CodeServerStopped. A host that closed only its input (`printf ... |
// mcpsandbox run`, or connect passing a host's EOF on) still reads: the
// server first has up to --grace, its stdin still open, to answer what is
// in flight, and what it leaves gets CodeServerStopped. The last log line ("mcpsandbox: session ended") and
// Outcome give the reason, and Outcome.Failed whether the server could not
// be kept up (the CLI then exits 1).
//
// # One process, many relays
//
// A relay takes nothing from its process but what Options hands it: the
// environment bare Env NAMEs are read from (LookupEnv) and the one an
// --unconfined server inherits (Environ), the logger, what starts a server
// (Start, sandbox.Start by default) and the hook that hands memory back to
// the OS after a big message (ReleaseMemory, one MemoryReleaser per
// process). Audit logs are shared per file by package audit. Many relays
// can run in one process, each with its own server.
//
// Start runs one in the background and returns its Session (Run is Start
// then Wait): Status reports its state, process, restarts, heartbeat round
// trip and cgroup figures; Restart replaces its process under the host's
// session, unseen (requests in flight are answered first, within --grace;
// what the host sends meanwhile is held), without counting towards
// --max-restarts, and brings back a server that was down for good. Prestart starts a server
// before any host is there and returns once its process answered a ping
// (a stand-in handshake every SDK answers before initialize); Attach then
// gives it its host, whose own initialize is the first the process sees,
// so a warm instance negotiates with the real client and cannot be told
// from a fresh one. A warm process that dies before Attach ends its
// session.
//
// # Error codes
//
// Errors mcpsandbox answers host requests with are stable; the data member
// holds "source": "mcpsandbox", "reason" and, where it applies,
// "generation" and "limit". A server's error that would pass for one of
// them (a code in -31199..-31101, data.source "mcpsandbox", a message that
// reads as beginning "mcpsandbox") reaches the host with data.source
// "server" and its message marked "[the server's words] " (forgederror.go).
// The codes:
//
//	-31101 CodeServerCrashed    the server died or hung during the request; it is being restarted
//	-31102 CodeServerStopped    the server is down for good (crash loop, --restart never,
//	                            clean exit, could not start) or mcpsandbox is shutting down;
//	                            the message says which
//	-31103 CodeMessageTooLarge  the request, or its response, was over --max-message
//	-31104 CodeQueueFull        too many messages held while the server restarts
//	-31105 CodeInvalidResponse  the server's response was not valid JSON-RPC, or not JSON
//	                            every host parses (too deep, not UTF-8)
//	-31106 CodeServerRequestRefused  (to the server) its request to the host is not
//	                            tracked: 1024 pending already, or its id is over 256 bytes
//	-31107 CodePolicyDenied     the policy's MCP rules forbid the request (a denied tool,
//	                            prompt or resource)
//	-31108 CodeCallTimeout      a tools/call took longer than --call-timeout
//	-31109 CodeRateLimited      a tools/call over its tool's --rate-limit (data: limit, retryAfterMs)
//	-31110 CodeTooManyCalls     a tools/call while --max-concurrent-calls are in flight
//	-31111 CodeServerUnavailable  no instance of the server can be had (the daemon's
//	                            connect: no daemon, unknown server, uid not allowed,
//	                            max-instances)
//	-31112 CodeStartTimeout     the server did not answer initialize (or server/discover)
//	                            within --start-timeout; names the hosts it was denied
//	-31113 CodeHeld             an item the lock holds for approval (data: item)
//	-31114 CodeApprovalRequired a tools/call that waits for `mcpsandbox approve ID`
//	                            (data: approvalId, expires)
//	-31115 CodeApprovalDenied   a tools/call a person did not allow (data.reason: declined,
//	                            cancelled, timeout, malformed, host-gone, expired)
//	-31116 CodeSecretInArguments  a tools/call whose arguments carry a secret (data: path,
//	                            secret: its format, never its value)
//	-32700 / -32600             the host sent a line that is not JSON / not a JSON-RPC request
//	                            (the server gets them too, for a request of its that is not)
package supervisor
