// Package mcprules applies a policy's rules on MCP traffic, behind the
// narrow interface Rules that the relay calls at the four named points of
// a host request's life: the host's request (HostRequest), the server's
// result (Call.Result), the server's notifications (ServerNotification),
// and the request's end (Call.End).
//
// The rules: tools outside --allow-tool or inside --deny-tool are left out
// of tools/list and a tools/call of one is refused; with --tool-prefix the
// host sees every tool prefixed and the server gets its own names back;
// prompts are allowed and denied by name the same way, resources by URI
// (resources/list, resources/templates/list, resources/read,
// resources/subscribe, completion/complete, notifications/resources/updated);
// tools/call is held to --rate-limit and --max-concurrent-calls and given
// --call-timeout. Only the messages a rule concerns are decoded.
//
// It is a package of its own so that the relay holds none of the rules'
// state and knows none of their decisions: like a middleware of the MCP Go
// SDK, HostRequest may refuse a request before it goes on, or change it,
// and what a rule keeps of one request until its result and its end (a
// concurrency slot, which list to filter) lives in the Call it returns, the
// middleware's stack frame, not on the relay's request record. The rules
// name no error code: a Refusal says which kind it is, and the relay
// answers it with its own code. They read messages through package jsonrpc
// and the policy's settings, and know nothing of processes or restarts.
//
// Rules compose as middleware does (Chain): the relay gets one Rules and
// never learns how many there are. The policy's rules are the outer ones,
// so a rule inside them (the pinned contract, package supervisor/pins)
// sees the server's own names and params, and its list results are
// filtered before the policy renames or hides what is left.
//
// # Answers, pending requests and questions to the host
//
// A rule that needs a person's word on a request (an approval) need not
// decide at its arrival. Its Verdict may instead carry:
//
//   - Answer: a result mcpsandbox gives the host in its own name; the
//     request never reaches the server (a 2026-07-28 input_required result
//     whose question the host puts to its user, then retries).
//   - Pending: "not yet". The relay holds the request, neither relayed nor
//     timed by --call-timeout, and calls Pending.Decide once, on a
//     goroutine of its own and without the relay's lock. Decide may ask
//     the host through Host.Request (elicitation/create in mcpsandbox's own
//     name: the relay sends it under an id of its own namespace, so the
//     answer comes back to Decide and can never reach the server). Its
//     Decision relays the request (with new Params, if any), and only then
//     does --call-timeout start, or refuses it. Decide's ctx ends when the
//     request does (the host cancels it or goes away, mcpsandbox shuts
//     down): Decide returns then, and the relay drops a decision on a
//     request that has ended, so the host gets one answer.
//   - Approval: what the audit line records of a decision taken at once.
//
// A Refusal's kinds ApprovalRequired, ApprovalDenied and SecretInArguments
// carry what the host's error data and the audit line name (the approval's
// id and expiry, the argument's path and the secret's format, never its
// value). Host.Request fails with ErrHostGone when the host leaves,
// ErrTooManyAsks when too many questions await it, and a *HostError for
// the host's error answer. Chain passes an inner rule's Answer, Pending and
// Approval on; two Pendings decide in turn, outer first.
package mcprules
