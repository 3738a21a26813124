package hostconfig

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

func sample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Each entry of each host's sample is told apart as wrap needs it.
func TestWrapEntriesKinds(t *testing.T) {
	for file, want := range map[string]map[string]Kind{
		"claude_desktop_config.json": {"memory": Stdio, "github": Stdio, "sqlite": Stdio, "time": Stdio},
		"cursor-mcp.json":            {"filesystem": Stdio, "linear": Stdio, "docs": Remote, "local": Stdio},
		"vscode-mcp.json":            {"notes": Stdio, "postgres": Stdio, "github": Remote, "fetch": HostSandboxed, "wrapped": Wrapped},
		"settings.json":              {"notes": Stdio, "github": Stdio, "search": Remote, "fetch": HostSandboxed, "sqlite": Stdio},
	} {
		entries, err := FileEntries(file, sample(t, file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		got := map[string]Kind{}
		for _, e := range entries {
			got[e.Name] = e.Kind
		}
		if len(got) != len(want) {
			t.Errorf("%s: entries %v, want %v", file, got, want)
		}
		for name, k := range want {
			if got[name] != k {
				t.Errorf("%s: %s is %v, want %v", file, name, got[name], k)
			}
		}
	}
	entries, _ := Entries(sample(t, "vscode-mcp.json"))
	pg := entries[1]
	if pg.Name != "postgres" || pg.Command != "uvx" || !slices.Equal(pg.Args, []string{"postgres-mcp", "--access-mode=restricted"}) ||
		!slices.Equal(pg.Env, []string{"DATABASE_URI"}) || pg.EnvFile != "${workspaceFolder}/.env" || pg.Indent != "\t\t" || pg.Line != 18 {
		t.Errorf("postgres: %+v", pg)
	}
}

// SetLaunch changes the entry's command and args and no other byte of the
// file; ReplaceEntry with the entry's Raw gives the file back exactly.
func TestWrapSetLaunchTouchesOnlyTheLaunchLine(t *testing.T) {
	for _, file := range []string{"claude_desktop_config.json", "cursor-mcp.json", "vscode-mcp.json", "settings.json"} {
		data := sample(t, file)
		entries, err := FileEntries(file, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Kind != Stdio {
				continue
			}
			args := append([]string{"run", "--", e.Command}, e.Args...)
			out, err := SetLaunch(data, e.Section, e.Name, "/usr/bin/mcpsandbox", args)
			if err != nil {
				t.Fatalf("%s %s: %v", file, e.Name, err)
			}
			start := bytes.Index(data, e.Raw)
			tail := data[start+len(e.Raw):]
			if !bytes.HasPrefix(out, data[:start]) || !bytes.HasSuffix(out, tail) {
				t.Errorf("%s %s: bytes outside the entry changed:\n%s", file, e.Name, out)
			}
			after, err := FileEntries(file, out)
			if err != nil {
				t.Fatalf("%s %s: the result does not parse: %v\n%s", file, e.Name, err, out)
			}
			i := slices.IndexFunc(after, func(a Entry) bool { return a.Name == e.Name })
			if a := after[i]; a.Command != "/usr/bin/mcpsandbox" || !slices.Equal(a.Args, args) || a.Kind != Wrapped || !slices.Equal(a.Env, e.Env) || a.EnvFile != e.EnvFile {
				t.Errorf("%s %s after SetLaunch: %+v", file, e.Name, a)
			}
			if keys(t, e.Raw) != keys(t, after[i].Raw) && e.Name != "local" {
				t.Errorf("%s %s: keys %s, then %s", file, e.Name, keys(t, e.Raw), keys(t, after[i].Raw))
			}
			back, err := ReplaceEntry(out, e.Section, e.Name, e.Raw)
			if err != nil || !bytes.Equal(back, data) {
				t.Errorf("%s %s: ReplaceEntry did not give the file back (%v):\n%s", file, e.Name, err, back)
			}
		}
	}
}

func keys(t *testing.T, raw []byte) string {
	v, err := hujson.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range v.Value.(*hujson.Object).Members {
		names = append(names, m.Name.Value.(hujson.Literal).String())
	}
	return strings.Join(names, ",")
}

// A new args list follows the old one's shape: one element a line in the
// file's indentation (tabs), its trailing comma kept; an entry without args
// gets them after its command, in the file's line breaks.
func TestWrapSetLaunchKeepsTheShape(t *testing.T) {
	data := sample(t, "vscode-mcp.json")
	out, err := SetLaunch(data, "servers", "notes", "mcpsandbox", []string{"run", "--", "npx", "-y"})
	if err != nil {
		t.Fatal(err)
	}
	want := "\t\t\t\"command\": \"mcpsandbox\",\n\t\t\t\"args\": [\n\t\t\t\t\"run\",\n\t\t\t\t\"--\",\n\t\t\t\t\"npx\",\n\t\t\t\t\"-y\",\n\t\t\t],\n\t\t\t\"cwd\""
	if !bytes.Contains(out, []byte(want)) {
		t.Errorf("notes:\n%s\nwant it to hold\n%s", out, want)
	}
	data = sample(t, "cursor-mcp.json")
	out, err = SetLaunch(data, "mcpServers", "local", "mcpsandbox", []string{"run", "--", "/home/ann/bin/my-server"})
	if err != nil {
		t.Fatal(err)
	}
	want = "\"local\": {\r\n            \"command\": \"mcpsandbox\",\r\n            \"args\": [\"run\", \"--\", \"/home/ann/bin/my-server\"]\r\n        }"
	if !bytes.Contains(out, []byte(want)) {
		t.Errorf("local:\n%q\nwant it to hold\n%q", out, want)
	}
	if back, _ := SetLaunch(out, "mcpServers", "local", "/home/ann/bin/my-server", nil); !bytes.Equal(back, data) {
		t.Errorf("SetLaunch without args did not take them out again:\n%q", back)
	}
}

// The entry's own args, which wrapped args end with, keep their comments;
// setting them back gives the entry back byte for byte.
func TestWrapSetLaunchKeepsTheArgsComments(t *testing.T) {
	data := sample(t, "settings.json")
	orig := []string{"-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "/home/ann/notes"}
	out, err := SetLaunch(data, SettingsSection, "notes", "mcpsandbox", append([]string{"run", "--", "npx"}, orig...))
	if err != nil {
		t.Fatal(err)
	}
	want := "\"args\": [\n                    \"run\",\n                    \"--\",\n                    \"npx\",\n                    \"-y\",\n" +
		"                    \"@modelcontextprotocol/server-filesystem@2026.8.31\",\n                    \"/home/ann/notes\", // nothing else\n                ],"
	if !bytes.Contains(out, []byte(want)) {
		t.Errorf("notes:\n%s\nwant it to hold\n%s", out, want)
	}
	if back, err := SetLaunch(out, SettingsSection, "notes", "npx", orig); err != nil || !bytes.Equal(back, data) {
		t.Errorf("SetLaunch back to its own args (%v):\n%s", err, back)
	}
}

// AddEntry indents a server as its neighbours are, into a file's
// mcpServers, an empty one, or a file without one; RemoveEntry takes it out
// again, leaving the file as it was.
func TestWrapAddAndRemoveEntry(t *testing.T) {
	raw := []byte("{\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"pkg\"]\n    }")
	for _, c := range []struct{ name, in, want string }{
		{"neighbours", "{\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"x\"}\n\t}\n}\n",
			"{\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"x\"},\n\t\t\"new\": {\n\t\t\t\"command\": \"npx\",\n\t\t\t\"args\": [\"-y\", \"pkg\"]\n\t\t}\n\t}\n}\n"},
		{"empty", "{\n  \"mcpServers\": {}\n}\n",
			"{\n  \"mcpServers\": {\n    \"new\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"pkg\"]\n    }\n  }\n}\n"},
		{"none", "{\n  \"mcpsandbox\": {\"users\": [\"ann\"]}\n}\n",
			"{\n  \"mcpsandbox\": {\"users\": [\"ann\"]},\n  \"mcpServers\": {\n    \"new\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"pkg\"]\n    }\n  }\n}\n"},
		{"trailing comma", "{\n  \"servers\": {\n    \"a\": {\"command\": \"x\"},\n  },\n}\n",
			"{\n  \"servers\": {\n    \"a\": {\"command\": \"x\"},\n    \"new\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"pkg\"]\n    },\n  },\n}\n"},
	} {
		out, err := AddEntry([]byte(c.in), "new", raw, "    ")
		if err != nil || string(out) != c.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", c.name, err, out, c.want)
			continue
		}
		if !json.Valid(out) && !strings.Contains(c.name, "comma") {
			t.Errorf("%s: not JSON:\n%s", c.name, out)
		}
		section := "mcpServers"
		if strings.Contains(c.in, `"servers"`) {
			section = "servers"
		}
		back, err := RemoveEntry(out, section, "new")
		if c.name == "neighbours" || c.name == "trailing comma" {
			if err != nil || string(back) != c.in {
				t.Errorf("%s: RemoveEntry: %v\n%s", c.name, err, back)
			}
		}
	}
	if _, err := AddEntry([]byte(`{"mcpServers": {"new": {}}}`), "new", raw, ""); err == nil || !strings.Contains(err.Error(), `has a server "new" already`) {
		t.Errorf("a second server new: %v", err)
	}
}

// A settings.json keeps its servers under mcp, and only there: its
// top-level "servers" is a setting of something else. Other files keep
// them at the top, and an "mcp" there is no host's.
func TestWrapSettingsSections(t *testing.T) {
	data := sample(t, "settings.json")
	entries, err := FileEntries("/home/ann/.config/Code/User/settings.json", data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Section+"/"+e.Name)
	}
	want := []string{"mcp.servers/notes", "mcp.servers/github", "mcp.servers/search", "mcp.servers/fetch", "mcp.servers/sqlite"}
	if !slices.Equal(got, want) {
		t.Errorf("settings.json: %v, want %v", got, want)
	}
	gh := entries[1]
	if gh.Indent != "            " || gh.Line != 39 || !slices.Equal(gh.Env, []string{"GITHUB_PERSONAL_ACCESS_TOKEN", "GITHUB_TOOLSETS"}) {
		t.Errorf("github: %+v", gh)
	}
	if entries, _ := FileEntries("mcp.json", data); len(entries) != 1 || entries[0].Section != "servers" || entries[0].Name != "build" {
		t.Errorf("the same bytes as an mcp.json: %+v", entries)
	}
	if _, err := SetLaunch(data, "servers", "notes", "mcpsandbox", nil); err == nil || !strings.Contains(err.Error(), `there is no server "notes" in servers`) {
		t.Errorf("SetLaunch of servers/notes: %v", err)
	}
	if _, err := ReplaceEntry(data, "mcp.inputs", "notes", []byte("{}")); err == nil {
		t.Error("ReplaceEntry into mcp.inputs, a list, did not fail")
	}
	for _, bad := range []string{`{"mcp": {"servers": []}}`, `{"mcp": {"servers": "x"}}`} {
		if _, err := FileEntries("settings.json", []byte(bad)); err == nil || !strings.Contains(err.Error(), `"mcp.servers" is not an object of servers`) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	for _, none := range []string{`{}`, `{"mcp": {"inputs": []}}`, `{"mcp": true}`} {
		if entries, err := FileEntries("settings.json", []byte(none)); err != nil || len(entries) != 0 {
			t.Errorf("%s: %v %+v", none, err, entries)
		}
	}
}
