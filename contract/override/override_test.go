package override

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A tools/list page as the filesystem reference server sends it (two of
// its tools, abridged), with a cursor and _meta that must pass untouched,
// and a second spelling of description a Go host could read instead.
const page = `{"tools":[` +
	`{"name":"read_text_file","description":"Read the complete contents of a file as text.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"annotations":{"readOnlyHint":true}},` +
	`{"name":"write_file","description":"Create a new file or completely overwrite an existing file with new content. Only works within allowed directories.","Description":"Harmless.","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]},"annotations":{"title":"Write File","readOnlyHint":false,"destructiveHint":false}}` +
	`],"nextCursor":"c2","_meta":{"x":1}}`

func overrides(t *testing.T, values ...string) map[string]policy.ToolOverride {
	t.Helper()
	o, err := policy.ParseToolOverrides(values)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// The host sees the operator's description and raised annotations; the
// other tool, the cursor and _meta pass as the server sent them.
func TestPageShowsTheOverride(t *testing.T) {
	o := overrides(t, `write_file={"description":"Write a file under /srv/notes.","annotations":{"destructiveHint":true}}`)
	got, err := Page([]byte(page), o)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Tools      []map[string]json.RawMessage
		NextCursor string
		Meta       json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(got, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 2 || res.NextCursor != "c2" || string(res.Meta) != `{"x":1}` {
		t.Fatalf("page changed beyond the override: %s", got)
	}
	if !strings.Contains(string(got), `{"name":"read_text_file","description":"Read the complete contents of a file as text.",`) {
		t.Errorf("the tool without an override changed: %s", got)
	}
	w := res.Tools[1]
	if string(w["description"]) != `"Write a file under /srv/notes."` {
		t.Errorf("description %s", w["description"])
	}
	if _, ok := w["Description"]; ok {
		t.Errorf("the server's Description stays beside the override, for a Go host to read: %s", got)
	}
	if string(w["annotations"]) != `{"destructiveHint":true,"readOnlyHint":false,"title":"Write File"}` {
		t.Errorf("annotations %s, want destructiveHint raised and the rest kept", w["annotations"])
	}
	same, err := Page([]byte(page), overrides(t, `missing={"description":"x"}`))
	if err != nil || !bytes.Equal(same, []byte(page)) {
		t.Errorf("a page no override applies to changed: %s (%v)", same, err)
	}
}

// The pinned text is the overridden one: the item pinned from the page the
// host saw equals Item applied to the server's, and it differs from the
// server's (a raised risk and a changed description).
func TestThePinIncludesTheOverride(t *testing.T) {
	o := overrides(t, `write_file={"description":"Write a file under /srv/notes.","annotations":{"destructiveHint":true}}`)
	served, err := contract.FromList("tools/list", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	shown, err := Page([]byte(page), o)
	if err != nil {
		t.Fatal(err)
	}
	seen, err := contract.FromList("tools/list", shown)
	if err != nil {
		t.Fatal(err)
	}
	for i := range served {
		it, err := Item(served[i], o)
		if err != nil {
			t.Fatal(err)
		}
		if it.Hash != seen[i].Hash {
			t.Errorf("%s: Item gives %s, the page the host saw %s", it.Name(), it.Text, seen[i].Text)
		}
		if it.Key == "write_file" {
			if c := contract.Compare(served[i], it); c.Op != contract.Changed {
				t.Errorf("the override against the server's tool: %v %q, want changed", c.Op, c.Details)
			}
		}
	}
}
