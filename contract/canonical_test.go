package contract

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"testing"
)

// reversedKeys writes v as JSON with every object's keys in reverse order,
// the order a different server implementation might well use.
func reversedKeys(v any) []byte {
	var b bytes.Buffer
	var write func(v any)
	write = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Sort(sort.Reverse(sort.StringSlice(keys)))
			b.WriteString("{ ")
			for i, k := range keys {
				if i > 0 {
					b.WriteString(" ,\n ")
				}
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteString(" : ")
				write(x[k])
			}
			b.WriteString("}")
		case []any:
			b.WriteString("[")
			for i, e := range x {
				if i > 0 {
					b.WriteString(",")
				}
				write(e)
			}
			b.WriteString("]")
		default:
			vb, _ := json.Marshal(x)
			b.Write(vb)
		}
	}
	write(v)
	return b.Bytes()
}

func TestCanonicalFormIgnoresWhatIsNoContract(t *testing.T) {
	pinned := fsTools(t, nil)
	SortItems(pinned)
	cases := map[string]func(res map[string]any) []byte{
		"keys in another order": func(res map[string]any) []byte { return reversedKeys(res) },
		"tools in another order": func(res map[string]any) []byte {
			tools := res["tools"].([]any)
			slices.Reverse(tools)
			return encode(t, res)
		},
		"_meta on the page and on each tool": func(res map[string]any) []byte {
			res["_meta"] = map[string]any{"io.example/trace": "abc"}
			for _, v := range res["tools"].([]any) {
				v.(map[string]any)["_meta"] = map[string]any{"io.example/t": 1}
			}
			return encode(t, res)
		},
		"nextCursor, ttlMs, cacheScope, resultType": func(res map[string]any) []byte {
			res["nextCursor"] = "page-2"
			res["ttlMs"] = 30000
			res["cacheScope"] = "session"
			res["resultType"] = "complete"
			return encode(t, res)
		},
		"fields the model is not told (execution, icons)": func(res map[string]any) []byte {
			for _, v := range res["tools"].([]any) {
				v.(map[string]any)["execution"] = map[string]any{"taskSupport": "optional"}
				v.(map[string]any)["icons"] = []any{map[string]any{"src": "https://example.com/i.png"}}
			}
			return encode(t, res)
		},
		"a null title is an absent one": func(res map[string]any) []byte {
			tool(res, "list_allowed_directories")["title"] = nil
			return encode(t, res)
		},
	}
	for name, variant := range cases {
		t.Run(name, func(t *testing.T) {
			res := fixture(t, "filesystem-tools-list")
			seen, err := FromList("tools/list", variant(res))
			if err != nil {
				t.Fatal(err)
			}
			SortItems(seen)
			want := pinned
			if name == "a null title is an absent one" {
				want = fsTools(t, func(res map[string]any) { delete(tool(res, "list_allowed_directories"), "title") })
				SortItems(want)
			}
			if len(seen) != len(want) {
				t.Fatalf("%d items, want %d", len(seen), len(want))
			}
			for i := range seen {
				if seen[i].Key != want[i].Key || seen[i].Hash != want[i].Hash || !bytes.Equal(seen[i].Text, want[i].Text) {
					t.Errorf("%s: hash %s, want %s\ntext %s\nwant %s", seen[i].Key, seen[i].Hash, want[i].Hash, seen[i].Text, want[i].Text)
				}
			}
			if changes := Diff(want, seen); len(changes) != 0 {
				t.Errorf("Diff = %v, want none", changes)
			}
		})
	}
}

// TestCanonicalText pins the byte form itself: RFC 8785 (sorted keys, no
// space, numbers as ECMAScript writes them), contract fields only.
func TestCanonicalText(t *testing.T) {
	it, err := NewItem(Tool, "t", []byte(`{"name":"t", "_meta":{"x":1}, "inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":1.50E2}}}, "description":"caf\u00e9 <b>", "execution":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"description":"café <b>","inputSchema":{"properties":{"n":{"maximum":150,"type":"number"}},"type":"object"},"name":"t"}`
	if string(it.Text) != want {
		t.Errorf("Text = %s\nwant   %s", it.Text, want)
	}
	if want := Hash([]byte(want)); it.Hash != want || len(it.Hash) != len("sha256:")+64 {
		t.Errorf("Hash = %s, want %s", it.Hash, want)
	}
}
