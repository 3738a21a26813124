package diagnose

import (
	"encoding/json"
	"strings"
	"testing"
)

// server-memory granted read-only starts, then fails each change writing
// its graph beside its code: the tool error's diagnosis says which file,
// the read-only grant, and how to give it a writable place, naming the
// variable this server takes it from. The server runs on: not permanent.
func TestToolErrorOfAReadOnlyGrant(t *testing.T) {
	pkg := "/srv/npm/node_modules/@modelcontextprotocol/server-memory"
	file := pkg + "/dist/memory.jsonl"
	f := Facts{Command: []string{"node", pkg + "/dist/index.js"}, ReadOnly: []string{"/srv/npm"}, FS: newFS().file(pkg+"/dist/index.js", 0o644)}
	result, _ := json.Marshal(map[string]any{"isError": true, "content": []any{
		map[string]string{"type": "text", "text": "Error: EROFS: read-only file system, open '" + file + "'\n    at async open"},
	}})
	d, ok := ToolError(result, f)
	if !ok {
		t.Fatalf("no diagnosis of %s", result)
	}
	msg := render(d)
	for _, want := range []string{"could not write " + file, "lies in /srv/npm, granted read-only (ReadOnly)", "ReadWrite DIR", "Env MEMORY_FILE_PATH=DIR/memory.jsonl"} {
		if !strings.Contains(msg, want) {
			t.Errorf("diagnosis %q does not say %q", msg, want)
		}
	}
	if d.Kind != ReadOnlyGrant || d.Setting != "ReadWrite" || d.Permanent {
		t.Errorf("%+v", d)
	}
	f.ReadWrite = []string{pkg}
	if d, ok := ToolError(result, f); ok {
		t.Errorf("in a writable grant: diagnosed %q", render(d))
	}
	f.ReadWrite = nil
	other := toolErrorQuoting("Error: EROFS: read-only file system, open '/home/ann/proj/state.json'")
	if d, ok := ToolError(other, f); ok {
		t.Errorf("outside every grant and every path the command names: %q", render(d))
	}
	f.WorkDir = "/home/ann/proj"
	if d, _ := ToolError(other, f); !strings.Contains(render(d), "it lies in /home/ann/proj, which the command line names but the policy does not grant; grant it writable with ReadWrite /home/ann/proj") {
		t.Errorf("in the working directory, not granted: %q", render(d))
	}
}

func toolErrorQuoting(text string) []byte {
	result, _ := json.Marshal(map[string]any{"isError": true, "content": []any{map[string]string{"type": "text", "text": text}}})
	return result
}

// Results that are no tool error, or name nothing of the confinement, are
// not parsed at all.
func TestToolErrorReadsOnlyToolErrors(t *testing.T) {
	for _, r := range []string{
		`{"content":[{"type":"text","text":"EROFS: read-only file system, open '/x'"}]}`,
		`{"isError":false,"content":[{"type":"text","text":"EROFS"}]}`,
		`{"isError":true,"content":[{"type":"text","text":"rate limited"}]}`,
	} {
		if Explainable([]byte(r)) {
			t.Errorf("%s: explainable", r)
		}
		if d, ok := ToolError([]byte(r), Facts{FS: newFS()}); ok {
			t.Errorf("%s: diagnosed %q", r, render(d))
		}
	}
	if !Explainable([]byte(`{"isError":true,"content":[{"type":"text","text":"[Errno 30] Read-only file system: '/x'"}]}`)) {
		t.Error("a python tool error is not explainable")
	}
}

// mcpsandbox's item is one more text item, marked in its _meta; the
// server's members and strings are kept as written.
func TestAddHintKeepsTheResult(t *testing.T) {
	out, ok := AddHint([]byte(`{"isError":true,"content":[{"type":"text","text":"a <b> & c"}],"_meta":{"k":1}}`), "why")
	if want := `{"_meta":{"k":1},"content":[{"type":"text","text":"a <b> & c"},{"_meta":{"io.github.mcpsandbox/hint":true},"text":"mcpsandbox: why","type":"text"}],"isError":true}`; !ok || string(out) != want {
		t.Errorf("AddHint = %s, %v\nwant %s", out, ok, want)
	}
	out, ok = AddHint([]byte(`{"isError":true,"content":[]}`), "why")
	if want := `{"content":[{"_meta":{"io.github.mcpsandbox/hint":true},"text":"mcpsandbox: why","type":"text"}],"isError":true}`; !ok || string(out) != want {
		t.Errorf("AddHint to empty content = %s, %v", out, ok)
	}
	if _, ok := AddHint([]byte(`[1]`), "why"); ok {
		t.Error("AddHint to an array succeeded")
	}
	// A bare tool error (after a denied host) gets the item as its
	// content; one whose content is no array is left as it is: the host
	// never gets a broken answer.
	for _, r := range []string{`{"isError":true}`, `{"isError":true,"content":null}`} {
		out, ok := AddHint([]byte(r), "why")
		if want := `{"content":[{"_meta":{"io.github.mcpsandbox/hint":true},"text":"mcpsandbox: why","type":"text"}],"isError":true}`; !ok || string(out) != want {
			t.Errorf("AddHint(%s) = %s, %v", r, out, ok)
		}
	}
	for _, r := range []string{`{"isError":true,"content":"x"}`, `{"content":{}}`} {
		if out, ok := AddHint([]byte(r), "why"); ok {
			t.Errorf("AddHint(%s) = %s", r, out)
		}
	}
}
