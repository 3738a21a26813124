package contract

import (
	"encoding/json"
	"fmt"
)

// listMethods maps each list method to the kind it lists and the member of
// its result that holds the items.
var listMethods = map[string]struct {
	kind   Kind
	member string
}{
	"tools/list":               {Tool, "tools"},
	"prompts/list":             {Prompt, "prompts"},
	"resources/list":           {Resource, "resources"},
	"resources/templates/list": {ResourceTemplate, "resourceTemplates"},
}

// ListKind is the kind of item a list method returns: "tools/list" → Tool,
// "resources/templates/list" → ResourceTemplate.
func ListKind(method string) (Kind, bool) {
	m, ok := listMethods[method]
	return m.kind, ok
}

// FromList is the items of one page of a list result. The page's own fields
// (nextCursor, ttlMs, cacheScope, resultType, _meta) are not part of any
// item. Two items with one key on a page are an error: a host would show one
// of them, and which one is not for a server to decide. So is an item that
// is no I-JSON (invalid UTF-8, a lone surrogate), which RFC 8785 cannot
// canonicalise.
func FromList(method string, result []byte) ([]Item, error) {
	m, ok := listMethods[method]
	if !ok {
		return nil, fmt.Errorf("%q is not a list method of the contract", method)
	}
	var page map[string]json.RawMessage
	if err := json.Unmarshal(result, &page); err != nil || page == nil {
		return nil, fmt.Errorf("%s result is not a JSON object", method)
	}
	var raws []json.RawMessage
	if v, ok := page[m.member]; ok {
		if err := json.Unmarshal(v, &raws); err != nil {
			return nil, fmt.Errorf("%s result's %q is not an array", method, m.member)
		}
	}
	items := make([]Item, 0, len(raws))
	seen := make(map[string]bool, len(raws))
	for i, raw := range raws {
		canon, key, err := contractTextKey(m.kind, raw)
		if err != nil {
			return nil, fmt.Errorf("%s result's %s[%d]: %w", method, m.member, i, err)
		}
		if seen[key] {
			return nil, fmt.Errorf("%s result lists %s %q twice", method, m.kind, key)
		}
		seen[key] = true
		items = append(items, Item{Kind: m.kind, Key: key, Text: canon, Hash: Hash(canon)})
	}
	return items, nil
}

// FromInitialize is the server-wide items of an initialize result: its
// instructions (no item when absent), serverInfo and capabilities.
func FromInitialize(result []byte) ([]Item, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil || res == nil {
		return nil, fmt.Errorf("initialize result is not a JSON object")
	}
	var items []Item
	for _, part := range []struct {
		kind   Kind
		member string
	}{{Instructions, "instructions"}, {ServerInfo, "serverInfo"}, {Capabilities, "capabilities"}} {
		raw, ok := res[part.member]
		if !ok || string(raw) == "null" {
			if part.kind == Instructions {
				continue
			}
			raw = json.RawMessage("{}")
		}
		canon, err := contractText(part.kind, raw)
		if err != nil {
			return nil, fmt.Errorf("initialize result's %s: %w", part.member, err)
		}
		items = append(items, Item{Kind: part.kind, Text: canon, Hash: Hash(canon)})
	}
	return items, nil
}
