package supervisor

import (
	"bytes"
	"encoding/json"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// listRule is how the MCP rules rewrite one kind of list result: which
// member holds the list, which member of an item the globs match, whether
// an item is hidden and what the host sees it named (nil: as it is).
type listRule struct {
	method string // for the log and errors, e.g. "tools/list"
	list   string // e.g. "tools"
	key    string // e.g. "name"
	hidden func(string) bool
	rename func(string) string
}

// listRuleLocked is the rule for the result of a request of kind mk, or
// nil when no rule touches it.
func (r *relay) listRuleLocked(mk methodKind) *listRule {
	ru := r.rules
	switch {
	case ru == nil:
	case mk == mToolsList && ru.rewritesTools():
		lr := &listRule{method: "tools/list", list: "tools", key: "name", hidden: func(n string) bool { return ru.toolDenial(n) != "" }}
		if ru.toolPrefix != "" {
			lr.rename = func(n string) string { return ru.toolPrefix + n }
		}
		return lr
	case mk == mPromptsList && ru.prompts():
		return &listRule{method: "prompts/list", list: "prompts", key: "name", hidden: func(n string) bool { return ru.promptDenial(n) != "" }}
	case mk == mResourcesList && ru.resources():
		return &listRule{method: "resources/list", list: "resources", key: "uri", hidden: func(u string) bool { return ru.resourceDenial(u) != "" }}
	case mk == mTemplatesList && ru.resources():
		return &listRule{method: "resources/templates/list", list: "resourceTemplates", key: "uriTemplate", hidden: func(u string) bool { return ru.resourceDenial(u) != "" }}
	}
	return nil
}

// filterListLocked applies lr to a list result for the host: hidden items
// are taken out, the others renamed. Without a change msg is returned as it
// is. Every other member (nextCursor, _meta) is kept, so pagination goes on
// as the server pages. A result the rules cannot read becomes an error
// rather than passing unchecked.
func (r *relay) filterListLocked(msg []byte, e *jsonrpc.Envelope, req hostRequest, gen int, lr *listRule) []byte {
	id := []byte(req.hostID)
	unreadable := func(why string) []byte {
		r.log.Warn("server's "+lr.method+" result cannot be checked against the MCP rules; answered with an error", "problem", why)
		return bytes.TrimSuffix(errorResponse(id, CodeInvalidResponse, "MCP server sent a "+lr.method+" result mcpsandbox cannot check against its MCP rules ("+why+")", errorData{Reason: why, Generation: gen}), []byte("\n"))
	}
	res, ok := members(e.Result)
	if !ok {
		return unreadable("the result is not an object")
	}
	var items []json.RawMessage
	if json.Unmarshal(res[lr.list], &items) != nil {
		return unreadable(lr.list + " is not a list")
	}
	list := []byte{'['}
	kept := 0
	for _, it := range items {
		item, ok := members(it)
		var name string
		if ok {
			name, ok = exactMember(item, lr.key)
		}
		if !ok {
			return unreadable("an item of " + lr.list + " has no " + lr.key)
		}
		if lr.hidden(name) {
			continue
		}
		if lr.rename != nil {
			item[lr.key], _ = json.Marshal(lr.rename(name))
			var err error
			if it, err = encodeObject(item); err != nil {
				return unreadable("an item could not be re-encoded")
			}
		}
		if kept > 0 {
			list = append(list, ',')
		}
		list = append(list, it...)
		kept++
	}
	if kept == len(items) && lr.rename == nil {
		if req.remapped {
			return jsonrpc.Splice(msg, e.IDStart, e.IDEnd, id)
		}
		return msg
	}
	res[lr.list] = append(list, ']')
	enc, err := encodeObject(res)
	if err != nil {
		return unreadable("it could not be re-encoded")
	}
	r.log.Debug(lr.method+" rewritten by the MCP rules", "hidden", len(items)-kept)
	return bytes.TrimSuffix(jsonrpc.NewResult(id, enc), []byte("\n"))
}
