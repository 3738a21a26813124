package layering

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcpsandbox/mcpsandbox"

// A rule: see the table in rules_test.go.
type rule struct {
	pkgs  []string // the packages it is about
	notOn []string // what they must not depend on, directly or not
	but   []string // exceptions to notOn: leaves that every layer may use
	why   string
}

// TestLayering checks the house rules against the module's import graph.
func TestLayering(t *testing.T) {
	graph, own := listGraph(t)
	for _, r := range rules {
		for _, p := range r.pkgs {
			if !slices.ContainsFunc(own, func(q string) bool { return match(p, q) }) {
				t.Errorf("rule %q names %s, which is no package of this module: update the rule to the tree", r.why, p)
			}
		}
	}
	for _, v := range check(graph, own, rules) {
		t.Error(v)
	}
}

// TestCheckFindsChains shows that the rules catch what they are for, on a
// made-up graph: sandbox/scope importing policy directly and the SDK through
// a third-party package (sandbox itself, which imports sandbox/scope, is not
// blamed again for that, but the supervisor is: the SDK would be linked into
// it), healthcheck importing a command, and through it the supervisor, that
// command linking the SDK, and the daemon net/http (a standard-library
// package).
func TestCheckFindsChains(t *testing.T) {
	m := func(p string) string { return module + "/" + p }
	graph := map[string][]string{
		m("sandbox"):        {m("sandbox/scope"), "os"},
		m("sandbox/scope"):  {"example.com/dbus", m("policy")},
		"example.com/dbus":  {"github.com/modelcontextprotocol/go-sdk/mcp"},
		m("policy"):         {"strings"},
		m("supervisor"):     {m("policy"), m("sandbox"), m("healthcheck")},
		m("healthcheck"):    {m("cmd/mcpsandbox")},
		m("cmd/mcpsandbox"): {m("supervisor")},
		m("daemon"):         {"net/http"},
		"net/http":          {"crypto/tls"},
		"github.com/modelcontextprotocol/go-sdk/mcp": {"github.com/modelcontextprotocol/go-sdk/jsonrpc"},
	}
	var own []string
	for p := range graph {
		if strings.HasPrefix(p, module+"/") {
			own = append(own, p)
		}
	}
	slices.Sort(own)
	got := check(graph, own, rules)
	var chains []string
	for _, v := range got {
		chains = append(chains, strings.SplitN(v, "\n", 2)[0])
	}
	want := []string{
		// The command is told too, by its own rule: it would link the SDK.
		"cmd/mcpsandbox → supervisor → sandbox → sandbox/scope → example.com/dbus → github.com/modelcontextprotocol/go-sdk/mcp",
		"sandbox/scope → policy",
		"sandbox/scope → example.com/dbus → github.com/modelcontextprotocol/go-sdk/mcp",
		// The supervisor is told too: it would link the SDK in through sandbox.
		"supervisor → sandbox → sandbox/scope → example.com/dbus → github.com/modelcontextprotocol/go-sdk/mcp",
		"healthcheck → cmd/mcpsandbox",
		"healthcheck → cmd/mcpsandbox → supervisor",
		"daemon → net/http",
	}
	if !slices.Equal(chains, want) {
		t.Errorf("check found\n\t%s\nwant\n\t%s", strings.Join(chains, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// listGraph returns the import graph of the module's non-test build, every
// dependency included (the standard library's own imports left out), and
// the module's own packages.
func listGraph(t *testing.T) (graph map[string][]string, own []string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to list the import graph: %v", err)
	}
	cmd := exec.Command("go", "list", "-deps", "-test=false",
		"-json=ImportPath,Imports,Standard,Error,DepsErrors", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	type listErr struct{ Err string }
	graph = map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Standard   bool
			Error      *listErr
			DepsErrors []*listErr
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		for _, e := range p.DepsErrors {
			t.Fatalf("go list: %s: %s", p.ImportPath, e.Err)
		}
		if p.Standard {
			graph[p.ImportPath] = nil
			continue
		}
		graph[p.ImportPath] = p.Imports
		if strings.HasPrefix(p.ImportPath, module+"/") {
			own = append(own, p.ImportPath)
		}
	}
	if len(own) == 0 {
		t.Fatalf("go list found no package of %s", module)
	}
	slices.Sort(own)
	return graph, own
}

// check returns one message for each import chain that breaks a rule: from
// a package the rule is about to the first package on its way that the rule
// forbids. A chain that runs through another package the same rule is about
// is left to that package's own chain, so each break is told once.
func check(graph map[string][]string, own []string, rules []rule) []string {
	var msgs []string
	told := map[string]bool{}
	for _, r := range rules {
		for _, from := range own {
			if !matchAny(r.pkgs, from) {
				continue
			}
			for _, chain := range forbiddenChains(graph, from, r) {
				names := make([]string, len(chain))
				for i, p := range chain {
					names[i] = strings.TrimPrefix(p, module+"/")
				}
				s := strings.Join(names, " → ")
				if told[s] {
					continue
				}
				told[s] = true
				verb := "imports"
				if len(chain) > 2 {
					verb = "depends on"
				}
				msgs = append(msgs, fmt.Sprintf("%s\n\t%s %s %s, against the rule that %s must not depend on %s: %s",
					s, names[0], verb, names[len(names)-1], strings.Join(r.pkgs, ", "), notOnMatch(r, chain[len(chain)-1]), r.why))
			}
		}
	}
	return msgs
}

// forbiddenChains walks the graph breadth first from from, so each chain
// found is a shortest one.
func forbiddenChains(graph map[string][]string, from string, r rule) [][]string {
	parent := map[string]string{from: ""}
	queue := []string{from}
	var hits []string
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range graph[n] {
			if _, seen := parent[m]; seen {
				continue
			}
			parent[m] = n
			switch {
			case matchAny(r.notOn, m) && !matchAny(r.but, m):
				hits = append(hits, m)
			case matchAny(r.pkgs, m):
				// Checked on its own.
			default:
				queue = append(queue, m)
			}
		}
	}
	var chains [][]string
	for _, h := range hits {
		var chain []string
		for p := h; p != ""; p = parent[p] {
			chain = append(chain, p)
		}
		slices.Reverse(chain)
		chains = append(chains, chain)
	}
	return chains
}

func notOnMatch(r rule, p string) string {
	for _, pat := range r.notOn {
		if match(pat, p) {
			return pat
		}
	}
	return p
}

func matchAny(patterns []string, path string) bool {
	return slices.ContainsFunc(patterns, func(pat string) bool { return match(pat, path) })
}

// match reports whether an import path matches a pattern of the rules table.
func match(pattern, path string) bool {
	pattern = strings.TrimPrefix(pattern, "./")
	if std, ok := strings.CutPrefix(pattern, "std:"); ok {
		pattern = std
	} else if pattern == "..." {
		pattern = module + "/..."
	} else if first, _, _ := strings.Cut(pattern, "/"); !strings.Contains(first, ".") {
		pattern = module + "/" + pattern
	}
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == prefix || strings.HasPrefix(path, prefix+"/")
	}
	return path == pattern
}
