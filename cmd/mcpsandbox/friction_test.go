package main

//lint:file-ignore SA1019 the host offers server-filesystem a root, which it honours (the SDK marks roots deprecated for the stateless protocol)

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// The launch lines of the friction cases work through the real
// `mcpsandbox run` with no flags at all, driven by the Go SDK client.

// frictionCase skips a case under -short (no confinement here, or no npm).
func frictionCase(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the friction cases run real servers confined")
	}
	requireConfinement(t)
}

// `mcpsandbox run -- python3 ~/tools/server.py`: a script under HOME with a
// sibling module it imports, under the pyenv shim python3 on PATH (which
// mcpsandbox resolves) and under /usr/bin/python3.
func TestFrictionPythonScriptByAbsolutePath(t *testing.T) {
	frictionCase(t)
	pythons := []string{}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		pythons = append(pythons, "/usr/bin/python3")
	}
	if p, err := exec.LookPath("python3"); err == nil && p != "/usr/bin/python3" {
		pythons = append(pythons, "python3") // here a pyenv shim
	}
	if len(pythons) == 0 {
		t.Skip("no python3 here")
	}
	for _, py := range pythons {
		t.Run(strings.ReplaceAll(py, "/", "_"), func(t *testing.T) {
			home, env := frictionHome(t)
			tools := filepath.Join(home, "tools")
			writePyServer(t, tools)
			m, _ := mustHost(t, home, env, "mcpsandbox", "run", "--", py, filepath.Join(tools, "server.py"))
			if got := m.tools(t); !slices.Equal(got, []string{"greet", "where"}) {
				t.Errorf("tools/list: %v", got)
			}
			if got, isErr := m.callResult(t, "greet", map[string]any{"name": "you"}); isErr || got != "hello you from helper.py" {
				t.Errorf("greet: %q (error %v); stderr:\n%s", got, isErr, m.stderr)
			}
			m.close(t)
		})
	}
}

// `cd DIR && mcpsandbox run -- python3 server.py`: the relative script runs,
// in DIR, where its relative paths resolve.
func TestFrictionPythonScriptByRelativePath(t *testing.T) {
	frictionCase(t)
	home, env := frictionHome(t)
	dir := filepath.Join(home, "project")
	writePyServer(t, dir)
	m, _ := mustHost(t, dir, env, "mcpsandbox", "run", "--", "python3", "server.py")
	got, isErr := m.callResult(t, "where", nil)
	var where struct{ Cwd, Data string }
	if err := json.Unmarshal([]byte(got), &where); isErr || err != nil {
		t.Fatalf("where: %q (error %v); stderr:\n%s", got, isErr, m.stderr)
	}
	if where.Cwd != dir || where.Data != "data of "+dir {
		t.Errorf("the server sees working directory %q and ./data.txt %q; want %q and the project's data.txt", where.Cwd, where.Data, dir)
	}
	m.close(t)
}

// nodeServer is a stand-in MCP server in Node's standard library alone,
// answering through a dependency in its project's node_modules.
const nodeServer = `const greet = require("tiny-greet");
const rl = require("readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === "initialize")
    send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "node-stand-in", version: "1" } } });
  else if (m.method === "tools/list")
    send({ id: m.id, result: { tools: [{ name: "greet", inputSchema: { type: "object" } }] } });
  else if (m.method === "tools/call")
    send({ id: m.id, result: { content: [{ type: "text", text: greet(m.params.arguments.name) }] } });
  else send({ id: m.id, error: { code: -32601, message: "no method " + m.method } });
});
`

// `mcpsandbox run -- node /path/dist/index.js`: a small Node project whose
// script requires a module from its own node_modules.
func TestFrictionNodeProjectScript(t *testing.T) {
	frictionCase(t)
	home, env := frictionHome(t)
	project := filepath.Join(home, "src", "my-server")
	writeTree(t, project, map[string]string{
		"package.json":                         `{"name": "my-server", "version": "1.0.0", "main": "dist/index.js"}`,
		"dist/index.js":                        nodeServer,
		"node_modules/tiny-greet/package.json": `{"name": "tiny-greet", "version": "1.0.0", "main": "index.js"}`,
		"node_modules/tiny-greet/index.js":     `module.exports = (name) => "hello " + name + " from tiny-greet";` + "\n",
	})
	m, _ := mustHost(t, home, env, "mcpsandbox", "run", "--", "node", filepath.Join(project, "dist", "index.js"))
	if got := m.tools(t); !slices.Equal(got, []string{"greet"}) {
		t.Errorf("tools/list: %v", got)
	}
	if got, isErr := m.callResult(t, "greet", map[string]any{"name": "you"}); isErr || got != "hello you from tiny-greet" {
		t.Errorf("greet: %q (error %v); stderr:\n%s", got, isErr, m.stderr)
	}
	m.close(t)
}

const filesystemPkg = "@modelcontextprotocol/server-filesystem@2026.8.31"

// `mcpsandbox run -- npx -y server-filesystem DIR` without --net host: an
// unprepared run tells the host at once to prepare it; once prepared it
// starts offline, fast, with DIR read-write and nothing else of the host.
func TestFrictionNpxFilesystemPrepareThenOffline(t *testing.T) {
	frictionCase(t)
	testenv.NPMServer(t, "server-filesystem") // the npm test tier
	cleanState(t, "npx", "-y", "@modelcontextprotocol/server-filesystem")
	home, env := frictionHome(t)
	dir := filepath.Join(home, "notes")
	outside := filepath.Join(home, "private")
	writeTree(t, home, map[string]string{"notes/todo.txt": "in notes", "private/secret.txt": "not for the server"})
	own(t, dir, 1000) // a user's own directory, as ~/notes is
	line := []string{"npx", "-y", filesystemPkg, dir}

	m, took, err := host(t, home, env, nil, append([]string{"mcpsandbox", "run", "--"}, line...)...)
	we, ok := rpcError(err)
	t.Logf("unprepared: initialize answered in %s", took)
	if !ok || we.Code != -31102 || !strings.Contains(we.Message, "mcpsandbox prepare -- npx -y "+filesystemPkg) || !strings.Contains(we.Message, "--net host") {
		t.Fatalf("unprepared run: initialize got %v, want -31102 naming `mcpsandbox prepare -- %s` and --net host; stderr:\n%s", err, strings.Join(line, " "), m.stderr)
	}
	if took > 10e9 {
		t.Errorf("unprepared run: the host waited %s for its answer, want under 10s", took)
	}

	if out, err := cliIn(t, home, env, append([]string{"prepare", "--"}, line...)...); err != nil {
		t.Fatalf("mcpsandbox prepare: %v\n%s", err, out)
	}

	m, took, err = host(t, home, env, []*mcp.Root{{URI: "file:///"}}, append([]string{"mcpsandbox", "run", "--"}, line...)...)
	if err != nil {
		t.Fatalf("prepared run: initialize: %v\nstderr:\n%s", err, m.stderr)
	}
	t.Logf("prepared: initialize answered in %s (offline)", took)
	if got, isErr := m.callResult(t, "read_text_file", map[string]any{"path": filepath.Join(dir, "todo.txt")}); isErr || got != "in notes" {
		t.Errorf("read in DIR: %q (error %v)", got, isErr)
	}
	// write_file waits for a person under the built-in filesystem's tier.
	notYet := func() {
		if _, err := os.Stat(filepath.Join(dir, "new.txt")); err == nil {
			t.Error("write_file wrote before it was approved")
		}
	}
	if got, isErr := m.callApproved(t, "write_file", map[string]any{"path": filepath.Join(dir, "new.txt"), "content": "written"}, notYet); isErr {
		t.Errorf("write in DIR: %q", got)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(data) != "written" {
		t.Errorf("the host's DIR/new.txt: %q, %v; want what the server wrote", data, err)
	}
	escapeAttempt(t, m, filepath.Join(outside, "secret.txt"), "not for the server")
	m.close(t)
}

// escapeAttempt reads a host file outside the filesystem server's grant,
// once the server's own rule allows all of / (the host offered it as an MCP
// root), so that only the sandbox stands in the way.
func escapeAttempt(t *testing.T, m *mcpsandbox, path, secret string) {
	t.Helper()
	// The server takes the roots on its own time after initialized: wait
	// until it says it allows /.
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ := m.callResult(t, "list_allowed_directories", map[string]any{})
		if slices.Contains(strings.Split(got, "\n"), "/") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never took the root / offered to it: %q; stderr:\n%s", got, m.stderr)
		}
	}
	got, isErr := m.callResult(t, "read_text_file", map[string]any{"path": path})
	if !isErr || strings.Contains(got, secret) {
		t.Errorf("read of %s, outside the grant: %q (error %v), want it to fail", path, got, isErr)
	}
	t.Logf("read outside the grant: %s", got)
}

const memoryPkg = "@modelcontextprotocol/server-memory@2026.8.31"

// The memory server keeps its graph across separate runs, whether a host
// starts it (prepared) with npx or starts the installed package with node:
// both launch lines select the memory built-in, whose state directory
// holds the graph.
func TestFrictionMemoryKeepsItsGraphAcrossRuns(t *testing.T) {
	frictionCase(t)
	installed := testenv.NPMServer(t, "server-memory")
	for _, c := range []struct {
		name    string
		line    []string
		prepare bool
	}{
		{"npx", []string{"npx", "-y", memoryPkg}, true},
		{"node", []string{"node", installed}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cleanState(t, c.line...)
			home, env := frictionHome(t)
			if c.prepare {
				if out, err := cliIn(t, home, env, append([]string{"prepare", "--"}, c.line...)...); err != nil {
					t.Fatalf("mcpsandbox prepare: %v\n%s", err, out)
				}
			}
			run := append([]string{"mcpsandbox", "run", "--"}, c.line...)
			m, _ := mustHost(t, home, env, run...)
			if !strings.Contains(m.stderr.String(), "policy=memory") {
				t.Errorf("%s did not select the memory built-in; stderr:\n%s", strings.Join(c.line, " "), m.stderr)
			}
			entity := map[string]any{"name": "friction-" + c.name, "entityType": "test", "observations": []string{"kept across runs"}}
			if got, isErr := m.callResult(t, "create_entities", map[string]any{"entities": []any{entity}}); isErr {
				t.Fatalf("create_entities: %s", got)
			}
			m.close(t)

			m, _ = mustHost(t, home, env, run...)
			got, isErr := m.callResult(t, "read_graph", map[string]any{})
			if isErr || !strings.Contains(got, "friction-"+c.name) || !strings.Contains(got, "kept across runs") {
				t.Errorf("read_graph in the second run: %q (error %v), want the entity the first run made; stderr:\n%s", got, isErr, m.stderr)
			}
			m.close(t)
		})
	}
}

// The run and prepare examples of `mcpsandbox help`, `help run` and `help
// prepare`, and the run lines of docs/policy.md, work as written: each runs
// in sh from a directory holding the files they name (server.py,
// ./my-server, ./notes.yaml from docs/policy.md), with ~/notes, and a host
// session (initialize, tools/list) through its stdio. An npx example is
// prepared first, as its text says; a prepare example is followed by the
// run it prepares.
func TestFrictionHelpExamplesRunAsWritten(t *testing.T) {
	frictionCase(t)
	testenv.NPMServer(t, "server-filesystem") // the npm test tier: these need the registry
	for _, name := range []string{"server-filesystem", "server-github", "server-memory"} {
		cleanState(t, "npx", "-y", "@modelcontextprotocol/"+name)
	}
	home, env := frictionHome(t)
	env = append(env, "API_KEY=dummy", "GITHUB_PERSONAL_ACCESS_TOKEN=dummy")
	work := filepath.Join(home, "project")
	writePyServer(t, work)
	writeTree(t, home, map[string]string{"notes/todo.txt": "in notes", "project/notes.yaml": docsNotesYAML(t)})
	own(t, filepath.Join(home, "notes"), 1000)

	prepared := map[string]bool{}
	prepare := func(t *testing.T, line string) {
		if prepared[line] {
			return
		}
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		prepared[line] = true
	}
	for _, line := range runExamples(t) {
		t.Run(line, func(t *testing.T) {
			if rest, ok := strings.CutPrefix(line, "mcpsandbox prepare "); ok {
				prepare(t, line)
				line = "mcpsandbox run " + rest
			} else if rest, ok := strings.CutPrefix(line, "mcpsandbox run "); ok && strings.Contains(line, " -- npx ") {
				prepare(t, "mcpsandbox prepare "+rest)
			}
			m, took := mustHost(t, work, env, "sh", "-c", line)
			if tools := m.tools(t); len(tools) == 0 {
				t.Errorf("%s: tools/list is empty", line)
			}
			t.Logf("%s: initialize answered in %s", line, took)
			m.close(t)
		})
	}
}

// runExamples are the run and prepare command lines of the manual's
// examples, as `mcpsandbox help` prints them, and of docs/policy.md's sh
// blocks.
func runExamples(t *testing.T) []string {
	t.Helper()
	var lines []string
	keep := func(line string) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "mcpsandbox run ") || strings.HasPrefix(line, "mcpsandbox prepare ") {
			lines = append(lines, line)
		}
	}
	for _, page := range [][]string{{"help"}, {"help", "prepare"}, {"help", "run"}} {
		out, stderr, code := runCLI(t, page...)
		_, examples, ok := strings.Cut(out, "\nEXAMPLES\n")
		if code != exitOK || !ok {
			t.Errorf("mcpsandbox %s: exit %d, no EXAMPLES; stderr %q", strings.Join(page, " "), code, stderr)
			continue
		}
		for _, line := range strings.Split(examples, "\n") {
			if strings.HasPrefix(line, "        ") { // examples' commands are indented past their text
				keep(line)
			}
		}
	}
	doc, err := os.ReadFile("../../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range shBlock.FindAllSubmatch(doc, -1) {
		for _, line := range strings.Split(string(b[1]), "\n") {
			keep(line)
		}
	}
	return lines
}

var shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// docsNotesYAML is docs/policy.md's notes.yaml, which the examples name.
func docsNotesYAML(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range yamlBlock.FindAllSubmatch(doc, -1) {
		if strings.HasPrefix(string(b[1]), "# notes.yaml") {
			return string(b[1])
		}
	}
	t.Fatal("docs/policy.md has no notes.yaml")
	return ""
}

// The host configurations in README.md work as written, with /home/you
// standing for a HOME of the test's and ${workspaceFolder} for ~/notes: its
// sh lines (prepare, npm install) run first, then each configured
// mcpsandbox command gets a host session (initialize, tools/list).
func TestFrictionReadmeHostConfigsRun(t *testing.T) {
	frictionCase(t)
	testenv.NPMServer(t, "server-filesystem") // the npm test tier: these need the registry
	cleanState(t, "npx", "-y", "@modelcontextprotocol/server-filesystem")
	home, env := frictionHome(t)
	writeTree(t, home, map[string]string{"notes/todo.txt": "in notes"})
	own(t, filepath.Join(home, "notes"), 1000)
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.NewReplacer("/home/you", home, "${workspaceFolder}", filepath.Join(home, "notes")).Replace(string(text))

	for _, b := range shBlock.FindAllStringSubmatch(readme, -1) {
		for _, line := range strings.Split(b[1], "\n") {
			if strings.HasPrefix(line, "mcpsandbox prepare ") || strings.HasPrefix(line, "npm install ") {
				cmd := exec.Command("sh", "-c", line)
				cmd.Dir, cmd.Env = home, env
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", line, err, out)
				}
			}
		}
	}
	configs := 0
	for _, b := range configBlock.FindAllStringSubmatch(readme, -1) {
		for name, server := range hostServers(t, b[1]) {
			if filepath.Base(server.Command) != "mcpsandbox" {
				continue
			}
			if len(server.Args) > 0 && server.Args[0] == "connect" {
				continue // the daemon's: TestReadmeDaemonRunsAsWritten runs it beside its daemon
			}
			configs++
			t.Run(name, func(t *testing.T) {
				m, _ := mustHost(t, home, env, append([]string{"mcpsandbox"}, server.Args...)...)
				if tools := m.tools(t); !slices.Contains(tools, "read_text_file") {
					t.Errorf("%v: tools/list %v", server.Args, tools)
				}
				m.close(t)
			})
		}
	}
	if configs == 0 {
		t.Error("README.md configures no host with mcpsandbox")
	}
}

var configBlock = regexp.MustCompile("(?s)```(?:json|python)\n(.*?)```")

type hostServer struct {
	Command string
	Args    []string
}

// hostServers reads the servers of a host configuration: Claude Desktop's
// mcpServers, VS Code's servers, or LangChain's map of them.
func hostServers(t *testing.T, block string) map[string]hostServer {
	t.Helper()
	var config struct {
		MCPServers map[string]hostServer `json:"mcpServers"`
		Servers    map[string]hostServer `json:"servers"`
	}
	if err := json.Unmarshal([]byte(block), &config); err != nil {
		t.Fatalf("README host configuration: %v\n%s", err, block)
	}
	servers := config.MCPServers
	if servers == nil {
		servers = config.Servers
	}
	if servers == nil {
		json.Unmarshal([]byte(block), &servers)
	}
	return servers
}
