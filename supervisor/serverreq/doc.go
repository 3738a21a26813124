// Package serverreq decides what becomes of the server's own requests to
// the host: elicitation/create, sampling/createMessage and roots/list, sent
// as requests in a classic session, or as the inputRequests of an
// input_required result in a 2026-07-28 one. Per kind the policy relays
// them (allow), answers the server an error (deny), or answers as a user
// who said no (decline); a token bucket (--server-request-limit) bounds
// how many reach the host; a URL-mode elicitation reaches it only when the
// URL's host is on the server's --allow-host list; an elicitation that
// would pass for mcpsandbox's own question is marked as the server's; and
// each request gets one audit line.
//
// It is a package of its own because these decisions are one concern the
// relay should not hold: the relay asks the Gate about each classic
// request (one call, under its lock) and answers what it is told, and the
// Rule reads modern results through the rule seam (package mcprules) like
// any other rule. It reads messages as JSON and knows nothing of
// processes, ids or restarts.
package serverreq
