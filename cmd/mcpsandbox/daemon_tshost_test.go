package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// A TypeScript SDK host of a daemon's server: testdata/tsclient/connect.mjs
// in node, whose StdioClientTransport starts `mcpsandbox connect NAME` as
// hosts built on that SDK start a server, driven a step at a time.

// tsDaemonHost is one node process holding one session.
type tsDaemonHost struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	exited  chan struct{}
	stderr  *testenv.LogCapture
	connPid int
	proto   string
}

// tsAnswer is a line connect.mjs answers with.
type tsAnswer struct {
	Pid      int      `json:"pid"`
	Protocol string   `json:"protocol"`
	Tools    []string `json:"tools"`
	Text     string   `json:"text"`
	IsError  bool     `json:"isError"`
	Error    *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// tsClientDirs are the pinned TypeScript SDKs, v1 and v2, or skips.
func tsClientDirs(t *testing.T) (v1, v2 string) {
	t.Helper()
	v1 = tsSDKDir(t)
	v2 = filepath.Join(filepath.Dir(v1), "client")
	if _, err := os.Stat(filepath.Join(v2, "dist", "index.mjs")); err != nil {
		t.Skipf("the TypeScript SDK v2 client is not installed in %s (%v): run scripts/test-setup.sh", v2, err)
	}
	return v1, v2
}

// connectTS starts node with connect.mjs and has it connect with sdk
// ("v1" or "v2") in mode ("legacy", "auto" or a pinned version; v2 only)
// to `mcpsandbox connect name`.
func (d *e2eDaemon) connectTS(t *testing.T, sdk, mode, name string) (*tsDaemonHost, error) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (scripts/test-setup.sh installs it): the TypeScript SDK clients run in it")
	}
	v1, v2 := tsClientDirs(t)
	dirs, _ := json.Marshal(map[string]string{"v1": v1, "v2": v2})
	script := filepath.Join(testenv.RepoRoot(t), "testdata", "tsclient", "connect.mjs")
	h := &tsDaemonHost{cmd: exec.Command(node, script, string(dirs)), exited: make(chan struct{}), stderr: testenv.NewLogCapture(t)}
	h.cmd.Env, h.cmd.Stderr = d.env, h.stderr // node's, and connect's, which the transport passes on
	if h.in, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h.out = bufio.NewReader(out)
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.cmd.Wait(); close(h.exited) }()
	t.Cleanup(h.Close)
	argv := d.connectArgv(name)
	a, err := h.step(map[string]any{"op": "connect", "sdk": sdk, "mode": mode, "command": argv[0], "args": argv[1:]})
	if err != nil {
		return nil, fmt.Errorf("TS SDK %s (%s) connecting to `mcpsandbox connect %s`: %w", sdk, mode, name, err)
	}
	h.connPid, h.proto = a.Pid, a.Protocol
	checkTSHostEnv(t, h.connPid)
	return h, nil
}

// tsHostEnv is what the TypeScript SDK's StdioClientTransport passes on to a
// server it starts with no env of its own.
var tsHostEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}

// checkTSHostEnv checks that connect (pid) runs with no more than tsHostEnv,
// as a host built on the SDK starts it.
func checkTSHostEnv(t *testing.T, pid int) {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Errorf("reading the environment of connect (pid %d): %v", pid, err)
		return
	}
	for _, kv := range strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00") {
		if name, _, _ := strings.Cut(kv, "="); kv != "" && !slices.Contains(tsHostEnv, name) {
			t.Errorf("connect runs with %s, which a TypeScript SDK host does not pass on", name)
		}
	}
}

// step sends one command and reads its answer; a failed step is an error.
func (h *tsDaemonHost) step(cmd map[string]any) (*tsAnswer, error) {
	b, _ := json.Marshal(cmd)
	if _, err := h.in.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("connect.mjs is gone: %w", err)
	}
	type read struct {
		line []byte
		err  error
	}
	got := make(chan read, 1)
	go func() {
		line, err := h.out.ReadBytes('\n')
		got <- read{line, err}
	}()
	var r read
	select {
	case r = <-got:
	case <-time.After(e2eWait):
		return nil, fmt.Errorf("connect.mjs did not answer %s within %v", cmd["op"], e2eWait)
	}
	if r.err != nil {
		return nil, fmt.Errorf("connect.mjs ended: %w", r.err)
	}
	var a tsAnswer
	if err := json.Unmarshal(r.line, &a); err != nil {
		return nil, fmt.Errorf("connect.mjs printed %q: %w", r.line, err)
	}
	if a.Error != nil {
		return &a, fmt.Errorf("code %d: %s (data %s)", a.Error.Code, a.Error.Message, a.Error.Data)
	}
	return &a, nil
}

func (h *tsDaemonHost) pid() int         { return h.connPid }
func (h *tsDaemonHost) protocol() string { return h.proto }

func (h *tsDaemonHost) tools() ([]string, error) {
	a, err := h.step(map[string]any{"op": "tools"})
	if err != nil {
		return nil, err
	}
	return a.Tools, nil
}

func (h *tsDaemonHost) call(tool string, args map[string]any) (string, bool, error) {
	if args == nil {
		args = map[string]any{}
	}
	a, err := h.step(map[string]any{"op": "call", "name": tool, "arguments": args})
	if err != nil {
		return "", false, err
	}
	return a.Text, a.IsError, nil
}

// Close closes the session and waits for node to exit.
func (h *tsDaemonHost) Close() {
	select {
	case <-h.exited:
		return
	default:
	}
	h.step(map[string]any{"op": "close"})
	h.in.Close()
	select {
	case <-h.exited:
	case <-time.After(e2eWait):
		h.cmd.Process.Kill()
		<-h.exited
	}
}
