package mcprules

import (
	"encoding/json"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// listRule is how the rules rewrite one kind of list result: which member
// holds the list, which member of an item the globs match, whether an item
// is hidden and what the host sees it named (nil: as it is).
type listRule struct {
	method string // for errors, e.g. "tools/list"
	list   string // e.g. "tools"
	key    string // e.g. "name"
	hidden func(string) bool
	rename func(string) string
	edit   func(key string, item map[string]json.RawMessage) bool // changes item in place, reporting whether it did; nil: none
}

// listRule is the rule for the result of method, or nil when no rule
// touches it.
func (s *set) listRule(method string) *listRule {
	switch {
	case method == "tools/list" && s.rewritesTools():
		lr := &listRule{method: method, list: "tools", key: "name", hidden: func(n string) bool { return s.tools.Denial(n) != "" }}
		if s.toolPrefix != "" {
			lr.rename = func(n string) string { return s.toolPrefix + n }
		}
		return lr
	case method == "prompts/list" && s.prompts.Active():
		return &listRule{method: method, list: "prompts", key: "name", hidden: func(n string) bool { return s.prompts.Denial(n) != "" }}
	case method == "resources/list" && s.resources.Active():
		return &listRule{method: method, list: "resources", key: "uri", hidden: func(u string) bool { return s.resources.Denial(u) != "" }}
	case method == "resources/templates/list" && s.resources.Active():
		return &listRule{method: method, list: "resourceTemplates", key: "uriTemplate", hidden: func(u string) bool { return s.resources.Denial(u) != "" }}
	}
	return nil
}

// filter applies lr to a list result: hidden items are taken out, the
// others renamed. Without a change it returns nil (the result goes as it
// is). Every other member (nextCursor, _meta) is kept, so pagination goes
// on as the server pages. A result the rules cannot read is refused rather
// than passed unchecked.
func (s *set) filter(result []byte, lr *listRule) ([]byte, *Refusal) {
	unreadable := func(why string) ([]byte, *Refusal) {
		return nil, &Refusal{Kind: Unreadable, Reason: why,
			Message: "MCP server sent a " + lr.method + " result mcpsandbox cannot check against its MCP rules (" + why + ")"}
	}
	res, ok := members(result)
	if !ok {
		return unreadable("the result is not an object")
	}
	var items []json.RawMessage
	if json.Unmarshal(res[lr.list], &items) != nil {
		return unreadable(lr.list + " is not a list")
	}
	list := []byte{'['}
	kept, changed := 0, false
	for _, it := range items {
		item, ok := members(it)
		var name string
		if ok {
			name, ok = jsonrpc.ExactMember(item, lr.key)
		}
		if !ok {
			return unreadable("an item of " + lr.list + " has no " + lr.key)
		}
		if lr.hidden(name) {
			continue
		}
		edited := lr.edit != nil && lr.edit(name, item)
		if lr.rename != nil {
			item[lr.key], _ = json.Marshal(lr.rename(name))
			edited = true
		}
		if edited {
			var err error
			if it, err = EncodeObject(item); err != nil {
				return unreadable("an item could not be re-encoded")
			}
			changed = true
		}
		if kept > 0 {
			list = append(list, ',')
		}
		list = append(list, it...)
		kept++
	}
	if kept == len(items) && !changed {
		return nil, nil
	}
	res[lr.list] = append(list, ']')
	enc, err := EncodeObject(res)
	if err != nil {
		return unreadable("it could not be re-encoded")
	}
	return enc, nil
}

// ListEdit is how a rule of another package (supervisor/pins) rewrites one
// page of a list result, by the key of each item (a tool's or prompt's
// name, a resource's uri, a template's uriTemplate).
type ListEdit struct {
	Hidden func(key string) bool                                  // left out of the page
	Edit   func(key string, item map[string]json.RawMessage) bool // changes item in place, reporting whether it did; nil: none
}

// EditList applies le to a result of method, one of the four list methods,
// as the policy's rules filter theirs: nil when nothing changed, a Refusal
// when the result cannot be read.
func EditList(method string, result []byte, le ListEdit) ([]byte, *Refusal) {
	lr, ok := listShapes[method]
	if !ok {
		return nil, nil
	}
	lr.method, lr.hidden, lr.edit = method, le.Hidden, le.Edit
	var s set
	return s.filter(result, &lr)
}

// listShapes are where each list method's result holds its items and
// which member keys them.
var listShapes = map[string]listRule{
	"tools/list":               {list: "tools", key: "name"},
	"prompts/list":             {list: "prompts", key: "name"},
	"resources/list":           {list: "resources", key: "uri"},
	"resources/templates/list": {list: "resourceTemplates", key: "uriTemplate"},
}
