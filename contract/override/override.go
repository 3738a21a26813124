// Package override applies the operator's tool overrides (policy
// pins.overrides, --tool-override) to what a server lists: the host sees
// the operator's description and raised annotations, and the lock pins the
// tool as overridden, so a server's later change under an override is
// still a change.
//
// It is a package of its own because it edits what contract only reads
// (contract knows no policy) and what scan only judges; the pin rule calls
// Page on a tools/list result before it compares and forwards it; Item
// gives one listed tool as Page shows it.
package override

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Page applies overrides (by the server's own tool names, before any
// --tool-prefix) to one tools/list result. Every other member and tool
// stays as the server sent it; without an override that applies, the
// result is returned as it is.
func Page(result []byte, overrides map[string]policy.ToolOverride) ([]byte, error) {
	if len(overrides) == 0 {
		return result, nil
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(result, &res) != nil || res == nil {
		return nil, errors.New("the tools/list result is not an object")
	}
	var tools []json.RawMessage
	if json.Unmarshal(res["tools"], &tools) != nil {
		return nil, errors.New("the tools/list result's tools is not a list")
	}
	changed := false
	for i, t := range tools {
		name, err := toolName(t)
		if err != nil {
			return nil, err
		}
		o, ok := overrides[name]
		if !ok {
			continue
		}
		if tools[i], err = Tool(t, o); err != nil {
			return nil, err
		}
		changed = true
	}
	if !changed {
		return result, nil
	}
	var err error
	if res["tools"], err = encode(tools); err != nil {
		return nil, err
	}
	return encode(res)
}

// Item applies the override of a tool item's name, re-canonicalised and
// hashed; another kind, or a tool without an override, is returned as it is.
func Item(it contract.Item, overrides map[string]policy.ToolOverride) (contract.Item, error) {
	o, ok := overrides[it.Key]
	if it.Kind != contract.Tool || !ok {
		return it, nil
	}
	text, err := Tool(it.Text, o)
	if err != nil {
		return it, err
	}
	return contract.NewItem(contract.Tool, it.Key, text)
}

// Tool applies o to one tool object. A member spelt in another case
// ("Description") goes too: a Go host decodes members case-insensitively
// and could read the server's instead of the operator's.
func Tool(tool []byte, o policy.ToolOverride) ([]byte, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(tool, &m) != nil || m == nil {
		return nil, errors.New("a tool is not an object")
	}
	if o.Description != nil {
		deleteFold(m, "description")
		m["description"], _ = json.Marshal(*o.Description)
	}
	if len(o.Annotations) > 0 {
		var ann map[string]json.RawMessage
		if a, ok := m["annotations"]; ok && !bytes.Equal(bytes.TrimSpace(a), []byte("null")) {
			if json.Unmarshal(a, &ann) != nil || ann == nil {
				return nil, errors.New("a tool's annotations are not an object")
			}
		}
		if ann == nil {
			ann = map[string]json.RawMessage{}
		}
		for hint, v := range o.Annotations {
			deleteFold(ann, hint)
			ann[hint], _ = json.Marshal(v)
		}
		deleteFold(m, "annotations")
		var err error
		if m["annotations"], err = encode(ann); err != nil {
			return nil, err
		}
	}
	return encode(m)
}

func toolName(t json.RawMessage) (string, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(t, &m) != nil || m == nil {
		return "", errors.New("a tool is not an object")
	}
	name, ok := jsonrpc.ExactMember(m, "name")
	if !ok {
		return "", fmt.Errorf("a tool has no name that reads one way")
	}
	return name, nil
}

// deleteFold deletes every member named key in any case.
func deleteFold(m map[string]json.RawMessage, key string) {
	for k := range m {
		if strings.EqualFold(k, key) {
			delete(m, k)
		}
	}
}

// encode writes v compactly, keeping the server's strings as written (no
// HTML escaping).
func encode(v any) ([]byte, error) {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}
