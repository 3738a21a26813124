package scan

import (
	"maps"
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Two servers of one config that expose the same tool name are named, and
// the prefixes proposed separate every name the host sees.
func TestClashesProposeSeparatingPrefixes(t *testing.T) {
	servers := map[string][]string{
		"@modelcontextprotocol/server-filesystem": {"read_file", "write_file"},
		"fs-notes":        {"read_file", "list"},
		"github":          {"search", "create_issue"},
		"gitlab-mcp":      {"search"},
		"memory":          {"read_graph"},
		"filesystem_list": {"x"}, // what filesystem_ + list would be
	}
	got := Clashes(servers)
	want := []Clash{
		{"read_file", []string{"@modelcontextprotocol/server-filesystem", "fs-notes"}},
		{"search", []string{"github", "gitlab-mcp"}},
	}
	if !slices.EqualFunc(got, want, func(a, b Clash) bool { return a.Tool == b.Tool && slices.Equal(a.Servers, b.Servers) }) {
		t.Fatalf("Clashes = %v, want %v", got, want)
	}
	prefixes := Prefixes(servers)
	wantPrefixes := map[string]string{"@modelcontextprotocol/server-filesystem": "filesystem_", "fs-notes": "fs_notes_", "github": "github_", "gitlab-mcp": "gitlab_"}
	if !maps.Equal(prefixes, wantPrefixes) {
		t.Errorf("Prefixes = %v, want %v", prefixes, wantPrefixes)
	}
	seen := map[string][]string{}
	for s, names := range servers {
		for _, n := range names {
			seen[s] = append(seen[s], prefixes[s]+n)
		}
	}
	if c := Clashes(seen); len(c) > 0 {
		t.Errorf("with the prefixes the host still sees clashes: %v", c)
	}
}

// A prefix that would make a name another server has gets a number.
func TestPrefixAvoidsANameTaken(t *testing.T) {
	servers := map[string][]string{"b": {"x"}, "c": {"x"}, "d": {"b_x"}}
	if got := Prefixes(servers); got["b"] != "b2_" || got["c"] != "c_" {
		t.Errorf("Prefixes = %v, want b2_ (b_x is d's) and c_", got)
	}
}

// A tool whose name another server of the config exposes gets a finding
// that names the server and the flag that separates them.
func TestItemNamesAClash(t *testing.T) {
	ctx := Context{Server: "fs-notes", OwnTools: []string{"read_file"},
		Others: map[string][]string{"fs-docs": {"read_file", "write_file"}, "github": {"create_issue"}}}
	got := Item(tool(t, "read_file", "Reads a file.", "The path."), ctx)
	want := `"read_file" is also a tool of server "fs-docs", so the model may call the wrong one: separate them with --tool-prefix fs_notes_ (policy mcp.tool-prefix)`
	if !has(got, RuleToolClash, Medium, "name", want) || Holds(got) {
		t.Errorf("findings:\n%s\nwant a medium %s: %s", lines(got), RuleToolClash, want)
	}
	if got := Item(tool(t, "write_notes", "Writes a note.", "The path."), ctx); len(got) > 0 {
		t.Errorf("a tool no other server has: %s", lines(got))
	}
}

// A whole contract is scanned with the policy's egress lists: a sibling
// tool named in a description is no shadowing, a URL the policy allows is
// no finding, one it does not is.
func TestContractScansWithThePolicy(t *testing.T) {
	p := policy.Default()
	p.AllowHosts = []string{"api.github.com"}
	ctx := ForPolicy(&p)
	ctx.Others = map[string][]string{"fs-docs": {"read_file"}}
	items := []contract.Item{
		tool(t, "read_file", "Reads a file; see https://api.github.com/x.", "The path."),
		tool(t, "read_many", "Calls read_file instead for one file. Posts to https://198.51.100.7/.", "The path."),
	}
	got := Contract(items, ctx)
	if len(got) != 2 || !has(got["tool:read_file"], RuleToolClash, Medium, "name", "") ||
		!has(got["tool:read_many"], RuleURLHost, Medium, "description", "198.51.100.7:443") || Holds(got["tool:read_many"]) {
		t.Errorf("findings: %v", got)
	}
}
