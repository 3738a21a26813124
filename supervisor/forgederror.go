package supervisor

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/supervisor/diagnose"
)

// A server answers host requests with errors of its own, relayed as it
// wrote them, except one that claims to be mcpsandbox's: a code in
// mcpsandbox's block, a data.source of "mcpsandbox", or a message that
// reads as beginning "mcpsandbox" (as the tool-error hint's rule reads it,
// see README "Tool-error hints"). Such an error's data.source becomes
// "server" and its message begins with diagnose.ServerWords, so a host
// that goes by data.source, and a user who reads the message, both see it
// as the server's. Its code and its other members are kept.

// ownBlock is mcpsandbox's block of codes (errors.go), with room to grow.
const ownBlockFirst, ownBlockLast = -31199, -31101

// serverSource is data.source of a server's error that claimed to be
// mcpsandbox's.
const serverSource = "server"

// claimsOwnError reports, reading only the bytes, whether a server's
// error value (valid JSON) claims to be one of mcpsandbox's. A member
// spelt more than one way claims it: receivers disagree on which they read.
func claimsOwnError(errValue []byte) bool {
	code, ok := jsonrpc.ExactMemberValue(errValue, "code")
	if !ok {
		return true
	}
	if n, err := strconv.Atoi(string(code)); err == nil && ownBlockFirst <= n && n <= ownBlockLast {
		return true
	}
	msg, ok := jsonrpc.ExactMemberValue(errValue, "message")
	if !ok || diagnose.MayPassForHint(msg) {
		return true
	}
	data, ok := jsonrpc.ExactMemberValue(errValue, "data")
	if !ok {
		return true
	}
	if len(data) == 0 || data[0] != '{' {
		return false
	}
	src, ok := jsonrpc.ExactMemberValue(data, "source")
	if !ok {
		return true
	}
	s, _ := jsonrpc.StringValue(src)
	return strings.EqualFold(strings.TrimSpace(s), errorSource)
}

// asServersError returns a server's error value that claims to be
// mcpsandbox's written anew as the server's: the message marked, data's
// source "server" (data made an object {"source":"server"} when it had
// none), each member spelt once; false when it is not an object.
func asServersError(errValue []byte) ([]byte, bool) {
	var parts struct { // read as a Go host reads it: any case, the last wins
		Code    json.RawMessage
		Message string
		Data    json.RawMessage
	}
	var rest map[string]json.RawMessage
	if json.Unmarshal(errValue, &rest) != nil || rest == nil || json.Unmarshal(errValue, &parts) != nil {
		return nil, false
	}
	for k := range rest {
		if strings.EqualFold(k, "code") || strings.EqualFold(k, "message") || strings.EqualFold(k, "data") {
			delete(rest, k)
		}
	}
	if parts.Code != nil {
		rest["code"] = parts.Code
	}
	rest["message"] = marshalJSON(diagnose.AsServerWords(parts.Message))
	var data map[string]json.RawMessage
	switch err := json.Unmarshal(parts.Data, &data); {
	case parts.Data == nil || string(parts.Data) == "null":
		rest["data"] = marshalJSON(map[string]string{"source": serverSource})
	case err == nil:
		for k := range data {
			if strings.EqualFold(k, "source") {
				delete(data, k)
			}
		}
		data["source"] = marshalJSON(serverSource)
		rest["data"] = marshalJSON(data)
	default:
		rest["data"] = parts.Data // not an object: it names no source
	}
	return marshalJSON(rest), true
}

// markServersErrorLocked returns out, the server's error response msg to
// req as relayed (its id replaced by the host's when req is remapped), with an error
// that claims to be mcpsandbox's rewritten as the server's, spliced in
// where it was; out itself otherwise. It is warned of once per session.
// r.mu is held.
func (r *relay) markServersErrorLocked(msg, out []byte, e *jsonrpc.Envelope, req *hostRequest) []byte {
	if !claimsOwnError(e.ErrorValue) {
		return out
	}
	marked, ok := asServersError(e.ErrorValue)
	if !ok {
		return out
	}
	start := jsonrpc.OffsetIn(msg, e.ErrorValue)
	if req.remapped && e.IDStart < start { // the id before it was replaced
		start += len(req.hostID) - (e.IDEnd - e.IDStart)
	}
	if !r.forgedErrorWarned {
		r.forgedErrorWarned = true
		r.log.Warn("the server answered with an error that would pass for mcpsandbox's own; the host gets it marked as the server's (data.source \"server\")")
	}
	return jsonrpc.Splice(out, start, start+len(e.ErrorValue), marked)
}

func marshalJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
