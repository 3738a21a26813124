package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The npm reference servers under the built-in `mcpsandbox run` chooses
// for them, end to end: prepared once with the network, then started with
// no --policy and no network for npm, through the official Go SDK client.

// skipShortBuiltins: these tests fetch from the npm registry and confine.
func skipShortBuiltins(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the built-in end-to-end tests fetch npm packages; they are for the full suite")
	}
	requireConfinement(t)
}

type npmServer struct {
	policy string   // the built-in run must choose
	pkg    string   // PKG@VERSION
	args   []string // the server's own arguments
	env    []string // set for prepare and run
	tools  []string // some of the tools it is known for
	try    func(t *testing.T, s *started)
	// then runs after the first run ended, on the same state.
	then func(t *testing.T, base *stateBase, run []string)
}

func TestBuiltinNPMServersPreparedRunOffline(t *testing.T) {
	skipShortBuiltins(t)
	fsDir := sandboxDir(t, "mcpsandbox-builtin-fs-")
	outside := filepath.Join(outsideDir(t), "secret.txt")
	servers := []npmServer{
		{policy: "memory", pkg: "@modelcontextprotocol/server-memory@2026.8.31",
			tools: []string{"create_entities", "read_graph"},
			try: func(t *testing.T, s *started) {
				s.mustCall(t, "create_entities", map[string]any{"entities": []any{
					map[string]any{"name": "mcpsandbox", "entityType": "program", "observations": []any{"confines servers"}}}})
				if got := s.mustCall(t, "read_graph", nil); !strings.Contains(got, "confines servers") {
					t.Errorf("read_graph after create_entities: %s", got)
				}
			},
			then: memoryKeepsItsGraph},
		{policy: "filesystem", pkg: "@modelcontextprotocol/server-filesystem@2026.8.31", args: []string{fsDir},
			tools: []string{"list_directory", "write_file", "read_text_file"},
			try: func(t *testing.T, s *started) {
				// write_file waits for a person under the built-in's tier.
				file := filepath.Join(fsDir, "written.txt")
				notYet := func() {
					if _, err := os.Stat(file); err == nil {
						t.Error("write_file wrote before it was approved")
					}
				}
				if got, failed := s.callApproved(t, "write_file", map[string]any{"path": file, "content": "from the sandbox"}, notYet); failed {
					t.Fatalf("write_file, approved: %s", got)
				}
				if data, err := os.ReadFile(file); err != nil || string(data) != "from the sandbox" {
					t.Errorf("write_file into the granted dir: host reads %q, %v", data, err)
				}
				if got := s.mustCall(t, "list_directory", map[string]any{"path": fsDir}); !strings.Contains(got, "written.txt") {
					t.Errorf("list_directory of the granted dir: %s", got)
				}
				if got, failed := s.call(t, "read_text_file", map[string]any{"path": outside}); !failed || strings.Contains(got, "host secret") {
					t.Errorf("read_text_file of %s, outside the grant, answered %q", outside, got)
				}
			}},
		{policy: "everything", pkg: "@modelcontextprotocol/server-everything@2026.8.31",
			tools: []string{"echo", "get-sum"},
			try: func(t *testing.T, s *started) {
				if got := s.mustCall(t, "echo", map[string]any{"message": "through the built-in"}); !strings.Contains(got, "through the built-in") {
					t.Errorf("echo: %q", got)
				}
			}},
		{policy: "sequential-thinking", pkg: "@modelcontextprotocol/server-sequential-thinking@2026.8.31",
			tools: []string{"sequentialthinking"},
			try: func(t *testing.T, s *started) {
				got := s.mustCall(t, "sequentialthinking", map[string]any{"thought": "one step", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": false})
				if !strings.Contains(got, "thoughtNumber") {
					t.Errorf("sequentialthinking: %q", got)
				}
			}},
		// The network ones: initialize and tools/list only, which need no internet.
		{policy: "github", pkg: "@modelcontextprotocol/server-github@2025.4.8", tools: []string{"search_repositories", "create_issue"}},
		{policy: "brave-search", pkg: "@modelcontextprotocol/server-brave-search@0.6.2", env: []string{"BRAVE_API_KEY=dummy"},
			tools: []string{"brave_web_search", "brave_local_search"}},
		{policy: "slack", pkg: "@modelcontextprotocol/server-slack@2025.4.25", env: []string{"SLACK_BOT_TOKEN=xoxb-dummy", "SLACK_TEAM_ID=T0DUMMY"},
			tools: []string{"slack_list_channels", "slack_post_message"}},
		{policy: "postgres", pkg: "@modelcontextprotocol/server-postgres@0.6.2", args: []string{"postgresql://localhost/none"},
			tools: []string{"query"}},
		{policy: "gitlab", pkg: "@modelcontextprotocol/server-gitlab@2025.4.25", env: []string{"GITLAB_PERSONAL_ACCESS_TOKEN=glpat-dummy"},
			tools: []string{"search_repositories", "create_issue"}},
	}
	for _, srv := range servers {
		t.Run(srv.policy, func(t *testing.T) {
			base := newStateBase(t, srv.env...)
			line := append([]string{"npx", "-y", srv.pkg}, srv.args...)
			prepared := base.prepare(t, line...)
			s := base.mustStart(t, append([]string{"--"}, line...)...)
			t.Logf("%s: prepare %v, first offline start to initialize %v", srv.pkg, prepared.Round(time.Millisecond), s.took.Round(time.Millisecond))
			if got := s.policyLogged(); got != srv.policy {
				t.Errorf("run chose policy %q, want the built-in %s", got, srv.policy)
			}
			have := s.toolNames(t)
			for _, want := range srv.tools {
				if !have[want] {
					t.Errorf("tools/list lacks %s: %v", want, have)
				}
			}
			if srv.try != nil {
				srv.try(t, s)
			}
			if srv.then != nil {
				s.stop()
				srv.then(t, base, append([]string{"--"}, line...))
			}
		})
	}
}

// outsideDir is a directory beside the grants, readable by all, holding
// a file the filesystem server must not reach.
func outsideDir(t *testing.T) string {
	t.Helper()
	dir := sandboxDir(t, "mcpsandbox-builtin-outside-")
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("host secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// An npx server that was never prepared fails at once without the
// network: the host's initialize gets -31102 naming prepare and --net.
func TestBuiltinUnpreparedNPXFailsFast(t *testing.T) {
	skipShortBuiltins(t)
	base := newStateBase(t)
	line := []string{"npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31"}
	s := base.start(t, append([]string{"--"}, line...)...)
	t.Logf("unprepared offline start failed after %v", s.took.Round(time.Millisecond))
	var werr *jsonrpc.Error
	if !errors.As(s.err, &werr) {
		t.Fatalf("initialize of an unprepared server: %v, want a JSON-RPC error", s.err)
	}
	if werr.Code != -31102 {
		t.Errorf("error code %d, want -31102", werr.Code)
	}
	for _, want := range []string{"`mcpsandbox prepare -- " + strings.Join(line, " ") + "`", "--net host"} {
		if !strings.Contains(werr.Message, want) {
			t.Errorf("the host was told %q; want it to say %s", werr.Message, want)
		}
	}
	if s.took > 10*time.Second {
		t.Errorf("the unprepared start took %v to fail; it should fail at once (well under 10s)", s.took)
	}
}

// memoryKeepsItsGraph: memory keeps its graph in its state dir, so a
// second run reads what the first created, from a file the server's own
// uid owns.
func memoryKeepsItsGraph(t *testing.T, base *stateBase, run []string) {
	second := base.mustStart(t, run...)
	if got := second.mustCall(t, "read_graph", nil); !strings.Contains(got, "confines servers") {
		t.Errorf("the second run's read_graph lacks the first run's entity: %s", got)
	}
	second.stop()

	dirs := base.stateDirs(t)
	if len(dirs) != 1 {
		t.Fatalf("state dirs %v, want the server's one", dirs)
	}
	dir, err := os.Stat(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	graph, err := os.Stat(filepath.Join(dirs[0], "memory.jsonl"))
	if err != nil {
		t.Fatalf("the graph is not in the state dir: %v", err)
	}
	owner := dir.Sys().(*syscall.Stat_t).Uid
	t.Logf("state dir %s: uid %d mode %o; memory.jsonl mode %o", dirs[0], owner, dir.Mode().Perm(), graph.Mode().Perm())
	if owner == 0 || dir.Mode().Perm() != 0o700 {
		t.Errorf("state dir %s: uid %d, mode %o; want the server's unprivileged uid, 0700", dirs[0], owner, dir.Mode().Perm())
	}
	if got := graph.Sys().(*syscall.Stat_t).Uid; got != owner || graph.Mode().Perm()&0o022 != 0 {
		t.Errorf("memory.jsonl: uid %d, mode %o; want the state dir's uid %d and no write for others", got, graph.Mode().Perm(), owner)
	}
}
