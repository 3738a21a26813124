package main

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/daemon/config"
	"github.com/mcpsandbox/mcpsandbox/hostconfig"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// wrapTestCommand is the mcpsandbox the wrapped entries of these tests
// name (--command), where the path of the test binary would be.
const wrapTestCommand = "/usr/local/bin/mcpsandbox"

// hostSample copies a host's sample configuration (hostconfig/testdata)
// into a directory of its own and returns its path and bytes.
func hostSample(t *testing.T, name string) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "hostconfig", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, data
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func entriesOf(t *testing.T, data []byte) map[string]hostconfig.Entry {
	t.Helper()
	return fileEntriesOf(t, "", data)
}

// fileEntriesOf are the entries of data, the file path's contents, by name.
func fileEntriesOf(t *testing.T, path string, data []byte) map[string]hostconfig.Entry {
	t.Helper()
	entries, err := hostconfig.FileEntries(path, data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	m := map[string]hostconfig.Entry{}
	for _, e := range entries {
		m[e.Name] = e
	}
	return m
}

// but is an entry's bytes without its command and args: what wrap must
// leave as it was.
func but(t *testing.T, e hostconfig.Entry) string {
	t.Helper()
	kept, err := hostconfig.KeepMembers(e.Raw, []string{"type", "env", "envFile", "cwd", "sandboxEnabled", "sandbox", "url", "headers", "disabled"})
	if err != nil {
		t.Fatal(err)
	}
	return string(kept)
}

// On each host's sample, wrap makes every stdio server run through
// `mcpsandbox run`, passing its env's names, and leaves every other byte
// of the file alone; a second wrap changes nothing; --undo gives the file
// back byte for byte, and the backup is the file as it was.
func TestWrapUndoRoundTripsEachHost(t *testing.T) {
	for _, c := range []struct {
		file    string
		wrapped map[string][]string // name: the args wrap gives it
		left    []string
	}{
		{"claude_desktop_config.json", map[string][]string{
			"memory": {"run", "--env", "MEMORY_FILE_PATH", "--", "npx", "-y", "@modelcontextprotocol/server-memory@2026.8.31"},
			"github": {"run", "--env", "GITHUB_PERSONAL_ACCESS_TOKEN", "--", "npx", "-y", "@modelcontextprotocol/server-github@2025.4.8"},
			"sqlite": {"run", "--env", "LOG_LEVEL", "--", "uv", "--directory", "/home/ann/src/mcp-sqlite", "run", "mcp-server-sqlite", "--db-path", "/home/ann/test.db"},
			"time":   {"run", "--", "python3", "-m", "mcp_server_time"},
		}, nil},
		{"cursor-mcp.json", map[string][]string{
			"filesystem": {"run", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "/home/ann/notes"},
			"linear":     {"run", "--env", "LINEAR_API_KEY", "--env", "DEBUG", "--", "node", "/home/ann/src/linear-mcp/build/index.js"},
			"local":      {"run", "--", "/home/ann/bin/my-server"},
		}, []string{"docs"}},
		{"vscode-mcp.json", map[string][]string{
			"notes":    {"run", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "${workspaceFolder}/notes"},
			"postgres": {"run", "--env", "DATABASE_URI", "--", "uvx", "postgres-mcp", "--access-mode=restricted"},
		}, []string{"github", "fetch", "wrapped"}},
		{"settings.json", map[string][]string{
			"notes":  {"run", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "/home/ann/notes"},
			"github": {"run", "--env", "GITHUB_PERSONAL_ACCESS_TOKEN", "--env", "GITHUB_TOOLSETS", "--", "npx", "-y", "@modelcontextprotocol/server-github@2025.4.8"},
			"sqlite": {"run", "--env", "LOG_LEVEL", "--", "uvx", "mcp-server-sqlite", "--db-path", "/home/ann/data/app.db"},
		}, []string{"search", "fetch"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			path, orig := hostSample(t, c.file)
			out, errOut, code := runCLI(t, "wrap", "--no-prepare", "--command", wrapTestCommand, path)
			if code != exitOK {
				t.Fatalf("wrap: exit %d\n%s%s", code, out, errOut)
			}
			wrapped := readFile(t, path)
			before, after := fileEntriesOf(t, path, orig), fileEntriesOf(t, path, wrapped)
			for name, args := range c.wrapped {
				a := after[name]
				if a.Command != wrapTestCommand || !slices.Equal(a.Args, args) {
					t.Errorf("%s: %s %q, want %s %q", name, a.Command, a.Args, wrapTestCommand, args)
				}
				if but(t, a) != but(t, before[name]) {
					t.Errorf("%s: its other fields changed:\n%s\nwas\n%s", name, a.Raw, before[name].Raw)
				}
				if !strings.Contains(out, "  "+name+": wrapped: "+wrapTestCommand+" run ") {
					t.Errorf("no wrapped line for %s:\n%s", name, out)
				}
			}
			for _, name := range c.left {
				if !bytes.Equal(after[name].Raw, before[name].Raw) {
					t.Errorf("%s changed:\n%s", name, after[name].Raw)
				}
			}
			names := func(m []hostconfig.Entry) (s []string) {
				for _, e := range m {
					s = append(s, e.Section+"/"+e.Name)
				}
				return s
			}
			eb, _ := hostconfig.FileEntries(path, orig)
			ea, _ := hostconfig.FileEntries(path, wrapped)
			if !slices.Equal(names(eb), names(ea)) {
				t.Errorf("the order of the servers changed: %v, then %v", names(eb), names(ea))
			}
			if got := readFile(t, path+".mcpsandbox-backup"); !bytes.Equal(got, orig) {
				t.Errorf("the backup is not the file as it was:\n%s", got)
			}
			state := readFile(t, path+".mcpsandbox-wrap.json")

			out, _, code = runCLI(t, "wrap", "--no-prepare", "--command", wrapTestCommand, path)
			if code != exitOK || !bytes.Equal(readFile(t, path), wrapped) || !bytes.Equal(readFile(t, path+".mcpsandbox-wrap.json"), state) || !strings.Contains(out, "nothing to change") {
				t.Errorf("a second wrap changed something (exit %d):\n%s", code, out)
			}
			for name := range c.wrapped {
				if !strings.Contains(out, "  "+name+": already runs through mcpsandbox") {
					t.Errorf("the second wrap does not say %s is wrapped already:\n%s", name, out)
				}
			}

			out, errOut, code = runCLI(t, "wrap", "--undo", path)
			if code != exitOK {
				t.Fatalf("wrap --undo: exit %d\n%s%s", code, out, errOut)
			}
			if got := readFile(t, path); !bytes.Equal(got, orig) {
				t.Errorf("--undo did not give the file back:\n%s\nwant\n%s", got, orig)
			}
			if _, err := os.Stat(path + ".mcpsandbox-wrap.json"); !os.IsNotExist(err) {
				t.Errorf("the wrap file is left after --undo: %v", err)
			}
		})
	}
}

// VS Code's sandboxed, remote and already wrapped entries are named with
// why wrap leaves them.
func TestWrapNamesWhatItLeaves(t *testing.T) {
	path, _ := hostSample(t, "vscode-mcp.json")
	out, _, _ := runCLI(t, "wrap", "--no-prepare", "--dry-run", "--command", wrapTestCommand, path)
	for _, want := range []string{
		`  fetch: left as it is: VS Code runs it in its own sandbox ("sandboxEnabled": true)`,
		"  github: skipped: a remote (http or sse) server, which the host does not start",
		"  wrapped: already runs through mcpsandbox",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// --dry-run prints the unified diff of the change and writes nothing.
func TestWrapDryRunPrintsADiffAndWritesNothing(t *testing.T) {
	path, orig := hostSample(t, "claude_desktop_config.json")
	out, _, code := runCLI(t, "wrap", "--dry-run", "--command", wrapTestCommand, path)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{
		"--- " + path + "\n+++ " + path + "\n@@ -2,8 +2,13 @@\n",
		`-    "time": {"command": "python3", "args": ["-m", "mcp_server_time"]}` + "\n" +
			`+    "time": {"command": "/usr/local/bin/mcpsandbox", "args": ["run", "--", "python3", "-m", "mcp_server_time"]}` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if !bytes.Equal(readFile(t, path), orig) {
		t.Error("--dry-run changed the file")
	}
	dir, _ := os.ReadDir(filepath.Dir(path))
	if len(dir) != 1 {
		t.Errorf("--dry-run wrote files: %v", dir)
	}
}

// --undo keeps what was changed in the file since wrap: an edit elsewhere,
// a server added, and an edit of a wrapped entry beside its launch line.
func TestWrapUndoKeepsLaterEdits(t *testing.T) {
	path, orig := hostSample(t, "claude_desktop_config.json")
	if _, _, code := runCLI(t, "wrap", "--no-prepare", "--command", wrapTestCommand, path); code != exitOK {
		t.Fatal("wrap failed")
	}
	edit := func(data []byte, from, to string) []byte {
		if !bytes.Contains(data, []byte(from)) {
			t.Fatalf("no %q in\n%s", from, data)
		}
		return bytes.Replace(data, []byte(from), []byte(to), 1)
	}
	later := func(data []byte) []byte {
		data = edit(data, `"Ctrl+Space"`, `"Alt+Space"`)
		data = edit(data, `"mcpServers": {`, `"mcpServers": {`+"\n"+`    "new": {"command": "node", "args": ["new.js"]},`)
		return edit(data, `"LOG_LEVEL": "info"}`, `"LOG_LEVEL": "debug"}`)
	}
	if err := os.WriteFile(path, later(readFile(t, path)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "wrap", "--undo", path)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if got, want := readFile(t, path), later(orig); !bytes.Equal(got, want) {
		t.Errorf("after --undo:\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(out, "sqlite: given back its command and args; the rest of the entry, edited since, is kept") {
		t.Errorf("--undo does not say it kept the edit of sqlite:\n%s", out)
	}
}

// With --daemon the host connects to the daemon's server, which wrap adds
// to the daemon's file (made when missing) as the daemon reads it; a
// server the daemon could not run (its envFile is missing) stays
// unwrapped; --undo takes out what wrap added.
func TestWrapDaemonAddsTheServers(t *testing.T) {
	path, orig := hostSample(t, "cursor-mcp.json")
	daemonFile := filepath.Join(t.TempDir(), "mcpsandbox", "servers.json")
	out, errOut, code := runCLI(t, "wrap", "--daemon", "--daemon-config", daemonFile, "--no-prepare", "--command", wrapTestCommand, path)
	if code != exitFailure {
		t.Errorf("exit %d, want %d for filesystem, whose envFile is missing\n%s%s", code, exitFailure, out, errOut)
	}
	if !strings.Contains(out, "  filesystem: not wrapped: the daemon could not run it: ") || !strings.Contains(out, "envFile: no such file /home/ann/.config/fs.env") {
		t.Errorf("no reason for filesystem:\n%s", out)
	}
	after := entriesOf(t, readFile(t, path))
	for _, name := range []string{"linear", "local"} {
		if a := after[name]; a.Command != wrapTestCommand || !slices.Equal(a.Args, []string{"connect", name}) {
			t.Errorf("%s: %s %q", name, a.Command, a.Args)
		}
	}
	if !bytes.Equal(after["filesystem"].Raw, entriesOf(t, orig)["filesystem"].Raw) {
		t.Errorf("filesystem changed:\n%s", after["filesystem"].Raw)
	}
	cfg, err := config.Load(daemonFile)
	if err != nil {
		t.Fatalf("the daemon's file: %v\n%s", err, readFile(t, daemonFile))
	}
	var got []string
	for _, s := range cfg.Servers {
		got = append(got, s.Name+"="+strings.Join(s.Command, " "))
	}
	want := []string{"linear=node /home/ann/src/linear-mcp/build/index.js", "local=/home/ann/bin/my-server"}
	if !slices.Equal(got, want) {
		t.Errorf("the daemon's servers: %q, want %q", got, want)
	}
	if st, err := os.Stat(daemonFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the daemon's file: %v, want mode 0600", err)
	}

	// A second run leaves both files as they are.
	daemonData := readFile(t, daemonFile)
	runCLI(t, "wrap", "--daemon", "--daemon-config", daemonFile, "--no-prepare", "--command", wrapTestCommand, path)
	if !bytes.Equal(readFile(t, daemonFile), daemonData) {
		t.Errorf("a second wrap --daemon changed the daemon's file:\n%s", readFile(t, daemonFile))
	}

	out, errOut, code = runCLI(t, "wrap", "--undo", path)
	if code != exitOK || !bytes.Equal(readFile(t, path), orig) {
		t.Errorf("--undo: exit %d\n%s%s\n%s", code, out, errOut, readFile(t, path))
	}
	cfg, err = config.Load(daemonFile)
	if err != nil || len(cfg.Servers) != 0 {
		t.Errorf("the daemon's file after --undo: %v\n%s", err, readFile(t, daemonFile))
	}
}

// An npx server whose prepare fails is left as it was, with the reason;
// the file's other servers are wrapped all the same.
func TestWrapLeavesAServerWhosePrepareFailed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	orig := `{"mcpServers": {
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2026.8.31"]},
  "local": {"command": "node", "args": ["/srv/server.js"]}
}}
`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("npm_config_registry", "no-registry-here") // prepare fails before reaching anything
	out, errOut, code := runCLI(t, "wrap", "--command", wrapTestCommand, path)
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	if !strings.Contains(out, `  memory: not wrapped: preparing it failed (the npm registry "no-registry-here" is no URL of a host`) || !strings.Contains(errOut, "mcpsandbox wrap: preparing memory (npx -y @modelcontextprotocol/server-memory@2026.8.31) ...") {
		t.Errorf("no reason for memory, or no progress line:\n%s\n%s", out, errOut)
	}
	after := entriesOf(t, readFile(t, path))
	if after["memory"].Command != "npx" || after["local"].Command != wrapTestCommand {
		t.Errorf("after wrap:\n%s", readFile(t, path))
	}
}

// The examples of `mcpsandbox help wrap` work as written, in sh from a
// home with Claude Desktop's and Cursor's files: the dry run changes
// nothing, wrap wraps, --undo gives the file back, --daemon connects
// Cursor to the daemon's server in ~/.config/mcpsandbox/daemon.json.
func TestWrapHelpExamplesRunAsWritten(t *testing.T) {
	home, env := wrapDaemonHome(t)
	claude := `{
  "mcpServers": {
    "notes": {"command": "node", "args": ["/srv/notes/server.js"], "env": {"NOTES_DIR": "/srv/notes"}}
  }
}
`
	writeTree(t, home, map[string]string{
		".config/Claude/claude_desktop_config.json": claude,
		".cursor/mcp.json":                          `{"mcpServers": {"tasks": {"command": "node", "args": ["/srv/tasks/server.js"]}}}`,
	})
	claudeFile := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	checks := map[string]func(out string){
		"--dry-run": func(out string) {
			wantIn(t, "dry run", out, "--- "+claudeFile, `-    "notes": {"command": "node"`, `"args": ["run", "--env", "NOTES_DIR", "--", "node", "/srv/notes/server.js"]`)
			if string(readFile(t, claudeFile)) != claude {
				t.Error("the dry run changed the file")
			}
		},
		"wrap": func(string) {
			if e := entriesOf(t, readFile(t, claudeFile))["notes"]; e.Command != self(t) || len(e.Args) == 0 || e.Args[0] != "run" { // this test binary is the mcpsandbox
				t.Errorf("not wrapped: %s", e.Raw)
			}
		},
		"--undo": func(string) {
			if got := string(readFile(t, claudeFile)); got != claude {
				t.Errorf("--undo gave back:\n%s", got)
			}
		},
		"--daemon": func(string) {
			if e := entriesOf(t, readFile(t, filepath.Join(home, ".cursor", "mcp.json")))["tasks"]; !slices.Equal(e.Args, []string{"connect", "tasks"}) {
				t.Errorf("Cursor's tasks: %s", e.Raw)
			}
			cfg, err := config.Load(filepath.Join(home, ".config", "mcpsandbox", "daemon.json"))
			if err != nil || len(cfg.Servers) != 1 || cfg.Servers[0].Name != "tasks" {
				t.Errorf("the daemon's file: %v %+v", err, cfg)
			}
		},
	}
	for _, line := range helpExamples(t, "wrap") {
		key := strings.Fields(line)[2]
		if strings.HasPrefix(key, "~") {
			key = "wrap"
		}
		check, ok := checks[key]
		if !ok {
			t.Errorf("no check for the example %q", line)
			continue
		}
		delete(checks, key)
		check(shell(t, home, env, line))
	}
	if len(checks) > 0 {
		t.Errorf("no example for %v", slices.Collect(maps.Keys(checks)))
	}
}

// Without FILE, wrap takes each of the hosts' usual files that exists,
// naming it and its host; with none, it says where it looked.
func TestWrapFindsTheUsualFiles(t *testing.T) {
	home, env := frictionHome(t)
	entry := `{"mcpServers": {"s": {"command": "node", "args": ["/srv/s.js"]}}}`
	writeTree(t, home, map[string]string{
		".config/Claude/claude_desktop_config.json": entry,
		".config/Code/User/mcp.json":                `{"servers": {"s": {"type": "stdio", "command": "node"}}}`,
		"project/.vscode/mcp.json":                  `{"servers": {"s": {"command": "python3", "args": ["s.py"]}}}`,
	})
	project := filepath.Join(home, "project")
	out := shell(t, project, env, "mcpsandbox wrap --dry-run")
	for _, want := range []string{
		filepath.Join(home, ".config/Claude/claude_desktop_config.json") + " (Claude Desktop):\n",
		filepath.Join(home, ".config/Code/User/mcp.json") + " (VS Code, user):\n",
		".vscode/mcp.json (VS Code, this workspace):\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Cursor") || strings.Count(out, "  s: wrapped: ") != 3 {
		t.Errorf("wrap took other files, or not each server:\n%s", out)
	}

	cmd := exec.Command("sh", "-c", "mcpsandbox wrap")
	cmd.Dir, cmd.Env = t.TempDir(), append(slices.Clone(env), "HOME="+t.TempDir())
	errOut, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitFailure || !strings.Contains(string(errOut), "no host configuration found; looked for:") ||
		!strings.Contains(string(errOut), "name the file: mcpsandbox wrap FILE") {
		t.Errorf("with no file: exit %d (%v)\n%s", code, err, errOut)
	}
}
