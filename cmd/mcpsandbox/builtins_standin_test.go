package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The built-ins whose servers cannot start here (no browser download, no
// PyPI, no uvx), and the others' grants beyond what their servers show:
// a stand-in MCP server started under each with --policy NAME reports
// what it can reach.

// asStandIn makes the test binary the stand-in server.
const asStandIn = "-test.as-builtin-standin"

type reachArgs struct {
	See   []string `json:"see"`   // paths to stat
	Write []string `json:"write"` // directories to create a file in
}

type reachReport struct {
	Env        map[string]string `json:"env"`
	NetNS      string            `json:"netns"`
	Interfaces []string          `json:"interfaces"`
	Resolv     string            `json:"resolv"` // /etc/resolv.conf
	Seen       map[string]bool   `json:"seen"`
	Wrote      map[string]string `json:"wrote"` // directory → "" or why not
}

func serveStandIn() int {
	s := mcp.NewServer(&mcp.Implementation{Name: "builtin-standin", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "reach", Description: "Reports the environment, network and paths the server can reach."},
		func(_ context.Context, _ *mcp.CallToolRequest, a reachArgs) (*mcp.CallToolResult, reachReport, error) {
			return nil, reach(a), nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "stand-in:", err)
		return 1
	}
	return 0
}

func reach(a reachArgs) reachReport {
	r := reachReport{Env: map[string]string{}, Seen: map[string]bool{}, Wrote: map[string]string{}}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		r.Env[k] = v
	}
	r.NetNS, _ = os.Readlink("/proc/self/ns/net")
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		r.Interfaces = append(r.Interfaces, i.Name)
	}
	resolv, _ := os.ReadFile("/etc/resolv.conf")
	r.Resolv = string(resolv)
	for _, p := range a.See {
		_, err := os.Stat(p)
		r.Seen[p] = err == nil
	}
	for _, dir := range a.Write {
		f, err := os.CreateTemp(dir, ".standin-")
		if err != nil {
			r.Wrote[dir] = err.Error()
			continue
		}
		f.Close()
		os.Remove(f.Name())
		r.Wrote[dir] = ""
	}
	return r
}

// standInCase is what a built-in grants, as its file documents it.
type standInCase struct {
	policy string
	set    map[string]string // variables it sets; ${STATE} is the state dir
	pass   []string          // variables it passes from mcpsandbox's environment
	net    string            // "host", "egress" or "none"
	grant  string            // "dir" (the argument is a directory), "db" (a file), "repo", "url" (a database's), or ""
	see    []string          // host paths it must see
}

var npxSet = map[string]string{"npm_config_cache": "${STATE}/npm", "npm_config_offline": "true"}
var uvxSet = map[string]string{"UV_CACHE_DIR": "${STATE}/uv", "UV_OFFLINE": "1", "UV_PYTHON_DOWNLOADS": "never"}

func with(base map[string]string, more ...string) map[string]string {
	m := maps.Clone(base)
	for i := 0; i+1 < len(more); i += 2 {
		m[more[i]] = more[i+1]
	}
	return m
}

func TestBuiltinGrantsSeenByAStandIn(t *testing.T) {
	skipShortBuiltins(t)
	cases := []standInCase{
		{policy: "puppeteer", net: "host", set: with(npxSet, "PUPPETEER_CACHE_DIR", "${STATE}/puppeteer", "ALLOW_DANGEROUS", "true")},
		{policy: "playwright", net: "host", set: with(npxSet, "PLAYWRIGHT_BROWSERS_PATH", "${STATE}/browsers", "PLAYWRIGHT_MCP_NO_SANDBOX", "true", "PLAYWRIGHT_MCP_HEADLESS", "true")},
		{policy: "fetch", net: "egress", set: uvxSet},
		{policy: "git", net: "none", set: uvxSet, grant: "repo"},
		{policy: "time", net: "none", set: uvxSet, see: []string{"/usr/share/zoneinfo/UTC", "/usr/share/zoneinfo/Europe/Paris"}},
		{policy: "sqlite", net: "none", set: uvxSet, grant: "db"},
		{policy: "memory", net: "none", set: with(npxSet, "MEMORY_FILE_PATH", "${STATE}/memory.jsonl")},
		{policy: "filesystem", net: "none", set: npxSet, grant: "dir"},
		{policy: "everything", net: "none", set: npxSet},
		{policy: "sequential-thinking", net: "none", set: npxSet},
		{policy: "github", net: "egress", set: npxSet, pass: []string{"GITHUB_PERSONAL_ACCESS_TOKEN", "GITHUB_HOST", "GITHUB_TOOLSETS"}},
		{policy: "gitlab", net: "egress", set: npxSet, pass: []string{"GITLAB_PERSONAL_ACCESS_TOKEN", "GITLAB_API_URL"}},
		{policy: "brave-search", net: "egress", set: npxSet, pass: []string{"BRAVE_API_KEY"}},
		{policy: "slack", net: "egress", set: npxSet, pass: []string{"SLACK_BOT_TOKEN", "SLACK_TEAM_ID", "SLACK_CHANNEL_IDS"}},
		{policy: "postgres", net: "egress", set: npxSet, pass: []string{"PGPASSWORD", "PGSSLMODE"}, grant: "url"},
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	var homeEntries []string
	ents, _ := os.ReadDir(home)
	for _, e := range ents {
		homeEntries = append(homeEntries, filepath.Join(home, e.Name()))
	}
	if len(homeEntries) == 0 {
		t.Fatalf("%s is empty: nothing to show the server cannot see", home)
	}
	hostNS, _ := os.Readlink("/proc/self/ns/net")
	for _, c := range cases {
		t.Run(c.policy, func(t *testing.T) {
			env := []string{"MCPSANDBOX_TEST_UNPASSED=leaked"}
			for _, v := range c.pass {
				env = append(env, v+"=passed-"+v)
			}
			base := newStateBase(t, env...)
			ungranted := filepath.Join(sandboxDir(t, "mcpsandbox-builtin-ungranted-"), "file")
			if err := os.WriteFile(ungranted, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			args, writable := standInGrant(t, c.grant)
			s := base.mustStart(t, append([]string{"--policy", c.policy, "--", self(t), asStandIn}, args...)...)
			if got := s.policyLogged(); got != c.policy {
				t.Errorf("the log names policy %q, want %s", got, c.policy)
			}
			states := base.stateDirs(t)
			if len(states) != 1 {
				t.Fatalf("state dirs %v, want the server's one", states)
			}
			state := states[0]
			see := slices.Concat(homeEntries, []string{ungranted}, c.see)
			var rep reachReport
			if err := json.Unmarshal([]byte(s.mustCall(t, "reach", map[string]any{"see": see, "write": append([]string{state}, writable...)})), &rep); err != nil {
				t.Fatal(err)
			}

			t.Logf("report: %+v", rep)
			for k, v := range c.set {
				if want := strings.ReplaceAll(v, "${STATE}", state); rep.Env[k] != want {
					t.Errorf("%s=%q in the server, want %q", k, rep.Env[k], want)
				}
			}
			for _, k := range c.pass {
				if rep.Env[k] != "passed-"+k {
					t.Errorf("%s=%q in the server, want it passed from the environment", k, rep.Env[k])
				}
			}
			if v, ok := rep.Env["MCPSANDBOX_TEST_UNPASSED"]; ok {
				t.Errorf("a variable the policy does not pass reached the server: MCPSANDBOX_TEST_UNPASSED=%s", v)
			}
			switch c.net {
			case "host":
				if rep.NetNS != hostNS || !slices.ContainsFunc(rep.Interfaces, func(i string) bool { return i != "lo" }) {
					t.Errorf("network %s, interfaces %v; want the host's (%s)", rep.NetNS, rep.Interfaces, hostNS)
				}
			case "none":
				if rep.NetNS == hostNS || !slices.Equal(rep.Interfaces, []string{"lo"}) {
					t.Errorf("network %s, interfaces %v; want a namespace of its own with only lo", rep.NetNS, rep.Interfaces)
				}
			case "egress": // names resolved by mcpsandbox's stub in the server's own namespace
				if rep.NetNS == hostNS || !slices.Equal(rep.Interfaces, []string{"lo"}) || !strings.Contains(rep.Resolv, "nameserver 127.0.0.1") {
					t.Errorf("network %s, interfaces %v, resolv.conf %q; want a namespace of its own with only lo, naming the stub at 127.0.0.1", rep.NetNS, rep.Interfaces, rep.Resolv)
				}
			}
			for dir, why := range rep.Wrote {
				if why != "" {
					t.Errorf("the server could not write in %s: %s", dir, why)
				}
			}
			for _, p := range homeEntries {
				if rep.Seen[p] {
					t.Errorf("the server sees %s, of the host's home", p)
				}
			}
			if rep.Seen[ungranted] {
				t.Errorf("the server sees %s, which nothing grants", ungranted)
			}
			for _, p := range c.see {
				if !rep.Seen[p] {
					t.Errorf("the server does not see %s", p)
				}
			}
			if c.policy == "puppeteer" {
				var opts struct{ Args []string }
				if err := json.Unmarshal([]byte(rep.Env["PUPPETEER_LAUNCH_OPTIONS"]), &opts); err != nil || !slices.Contains(opts.Args, "--no-sandbox") {
					t.Errorf("PUPPETEER_LAUNCH_OPTIONS=%q, want JSON whose args hold --no-sandbox (%v)", rep.Env["PUPPETEER_LAUNCH_OPTIONS"], err)
				}
			}
		})
	}
}

// standInGrant makes what a built-in's server takes as its argument, and
// returns the arguments and the directories the server must write.
func standInGrant(t *testing.T, kind string) (args, writable []string) {
	switch kind {
	case "dir": // filesystem: the directories it serves
		dir := sandboxDir(t, "mcpsandbox-builtin-served-")
		return []string{dir}, []string{dir}
	case "repo": // git --repository: git writes in .git
		repo := sandboxDir(t, "mcpsandbox-builtin-repo-")
		dotgit := filepath.Join(repo, ".git")
		if err := os.Mkdir(dotgit, 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dotgit, 0o777)
		return []string{"--repository", repo}, []string{repo, dotgit}
	case "url": // postgres: the database it connects to, which its policy allows
		return []string{"postgresql://db.example.test/none"}, nil
	case "db": // sqlite --db-path: SQLite writes its journal beside the file
		dir := sandboxDir(t, "mcpsandbox-builtin-db-")
		db := filepath.Join(dir, "test.db")
		if err := os.WriteFile(db, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		return []string{"--db-path", db}, []string{dir}
	}
	return nil, nil
}
