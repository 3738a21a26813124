package contract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The fixtures in testdata are what the pinned reference servers answered
// (testdata/npm: @modelcontextprotocol/server-filesystem and
// server-everything 2026.8.31, run with initialize then each list).

// fixture is one of testdata's results, decoded so a test can edit it.
func fixture(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// listed is the items of a list result, after edit changed the result.
func listed(t *testing.T, method, name string, edit func(res map[string]any)) []Item {
	t.Helper()
	res := fixture(t, name)
	if edit != nil {
		edit(res)
	}
	items, err := FromList(method, encode(t, res))
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// byKey is the item of items whose key is key.
func byKey(t *testing.T, items []Item, key string) Item {
	t.Helper()
	for _, it := range items {
		if it.Key == key {
			return it
		}
	}
	t.Fatalf("no item %q", key)
	return Item{}
}

// tool is the tool of a tools/list result named name.
func tool(res map[string]any, name string) map[string]any {
	for _, v := range res["tools"].([]any) {
		if m := v.(map[string]any); m["name"] == name {
			return m
		}
	}
	panic("no tool " + name)
}

func fsTools(t *testing.T, edit func(res map[string]any)) []Item {
	return listed(t, "tools/list", "filesystem-tools-list", edit)
}

// editTool lists the filesystem server's tools with edit applied to one.
func editTool(t *testing.T, name string, edit func(tool map[string]any)) Item {
	t.Helper()
	items := fsTools(t, func(res map[string]any) { edit(tool(res, name)) })
	return byKey(t, items, name)
}

func props(tool map[string]any) map[string]any {
	return tool["inputSchema"].(map[string]any)["properties"].(map[string]any)
}
