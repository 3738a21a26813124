package main

//lint:file-ignore SA1019 hosts offer roots, which server-filesystem honours (the SDK marks them deprecated for the stateless protocol)

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/launch"
)

// pyServer is a stand-in MCP server in Python's standard library alone
// (no PyPI here): JSON-RPC lines on stdio. greet answers through its
// sibling module helper.py; where reports its working directory and
// ./data.txt, read relative to it.
const pyServer = `#!/usr/bin/env python3
import json, os, sys
import helper

def send(msg):
    sys.stdout.write(json.dumps(dict(jsonrpc="2.0", **msg)) + "\n")
    sys.stdout.flush()

def call(name, args):
    if name == "greet":
        return helper.greet(args.get("name", ""))
    if name == "where":
        with open("data.txt") as f:
            return json.dumps({"cwd": os.getcwd(), "data": f.read()})
    raise KeyError(name)

for line in sys.stdin:
    msg = json.loads(line)
    method, id = msg.get("method"), msg.get("id")
    if id is None:
        continue
    if method == "initialize":
        send(dict(id=id, result={"protocolVersion": msg["params"]["protocolVersion"],
             "capabilities": {"tools": {}}, "serverInfo": {"name": "stand-in", "version": "1"}}))
    elif method == "tools/list":
        send(dict(id=id, result={"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in ("greet", "where")]}))
    elif method == "tools/call":
        p = msg["params"]
        try:
            send(dict(id=id, result={"content": [{"type": "text", "text": call(p["name"], p.get("arguments") or {})}]}))
        except Exception as e:
            send(dict(id=id, result={"isError": True, "content": [{"type": "text", "text": repr(e)}]}))
    else:
        send(dict(id=id, error={"code": -32601, "message": "no method " + method}))
`

const pyHelper = "def greet(name):\n    return 'hello ' + name + ' from helper.py'\n"

// writePyServer writes server.py (executable, also as my-server), its
// sibling helper.py and data.txt into dir.
func writePyServer(t *testing.T, dir string) {
	t.Helper()
	writeTree(t, dir, map[string]string{"server.py": pyServer, "my-server": pyServer, "helper.py": pyHelper, "data.txt": "data of " + dir})
	for _, exe := range []string{"server.py", "my-server"} {
		if err := os.Chmod(filepath.Join(dir, exe), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// writeTree writes files (path relative to dir → content), making their
// directories readable by any user, as a sandbox's uid must read them.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// frictionHome is a fresh HOME any user may enter, and an environment
// whose HOME it is and whose PATH starts with a directory holding
// `mcpsandbox` (this test binary as the CLI), as a user's shell has.
func frictionHome(t *testing.T) (home string, env []string) {
	t.Helper()
	root := testenv.SharedDir(t, "mcpsandbox-friction-")
	home = filepath.Join(root, "home")
	bin := filepath.Join(root, "bin")
	writeTree(t, root, map[string]string{"home/.keep": "", "bin/mcpsandbox": "#!/bin/sh\nexec " + self(t) + " " + asCLI + " \"$@\"\n"})
	if err := os.Chmod(filepath.Join(bin, "mcpsandbox"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return home, append(env, "HOME="+home, "PATH="+bin+":"+os.Getenv("PATH"), "MCPSANDBOX_LOCK="+filepath.Join(root, "lock.json"))
}

// host starts argv in dir with env and connects the Go SDK client, offering
// roots, to its stdio, as a host would. It returns the session, or the error initialize
// got, and how long from the start until that answer.
func host(t *testing.T, dir string, env []string, roots []*mcp.Root, argv ...string) (*mcpsandbox, time.Duration, error) {
	t.Helper()
	if argv[0] == "mcpsandbox" { // this test binary as the CLI
		argv = append([]string{self(t), asCLI}, argv[1:]...)
	}
	m := &mcpsandbox{cmd: exec.Command(argv[0], argv[1:]...), stderr: testenv.NewLogCapture(t), exited: make(chan struct{})}
	m.cmd.Dir, m.cmd.Env, m.cmd.Stderr = dir, env, m.stderr
	in, err := m.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { m.cmd.Wait(); close(m.exited) }()
	t.Cleanup(func() {
		in.Close()
		select {
		case <-m.exited:
		case <-time.After(10 * time.Second):
			m.cmd.Process.Kill()
			<-m.exited
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "friction-test", Version: "1"}, nil)
	client.AddRoots(roots...)
	m.cs, err = client.Connect(ctx, &mcp.IOTransport{Reader: out, Writer: in}, nil)
	return m, time.Since(start), err
}

// mustHost is host for a session that must come up.
func mustHost(t *testing.T, dir string, env []string, argv ...string) (*mcpsandbox, time.Duration) {
	t.Helper()
	m, took, err := host(t, dir, env, nil, argv...)
	if err != nil {
		t.Fatalf("%s: initialize: %v\nstderr:\n%s", strings.Join(argv, " "), err, m.stderr)
	}
	return m, took
}

// close ends the host's session and waits for mcpsandbox to exit 0.
func (m *mcpsandbox) close(t *testing.T) {
	t.Helper()
	m.cs.Close()
	if code := m.wait(t); code != exitOK {
		t.Errorf("exit status %d after the host left, want 0; stderr:\n%s", code, m.stderr)
	}
}

// tools lists the session's tool names.
func (m *mcpsandbox) tools(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := m.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v\nstderr:\n%s", err, m.stderr)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// callResult calls a tool and returns its text and whether it is an error
// result; a protocol error fails the test.
func (m *mcpsandbox) callResult(t *testing.T, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s", tool, err, m.stderr)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n"), res.IsError
}

// rpcError is the JSON-RPC error a request got, if it got one.
func rpcError(err error) (*jsonrpc.Error, bool) {
	var we *jsonrpc.Error
	return we, errors.As(err, &we)
}

// cleanState removes the state directory of the server of the launch
// line (mcpsandbox runs as root here, so it is /var/lib/mcpsandbox/NAME)
// now and when the test ends, so that a test starts unprepared and leaves
// nothing behind.
func cleanState(t *testing.T, line ...string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the state directory's place is root's here (/var/lib/mcpsandbox)")
	}
	dir := launch.Read(line, nil, launch.Host{Root: true}).StateDir
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// cli runs `mcpsandbox ARGS` to its end in dir with env, for prepare.
func cliIn(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(self(t), append([]string{asCLI}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// own gives dir and what it holds to uid, as a user's own files are.
func own(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}
