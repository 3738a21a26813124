package supervisor_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// hostDir makes a directory the sandbox's user could read, were it granted.
func hostDir(t *testing.T, parts ...string) string {
	t.Helper()
	dir := filepath.Join(append([]string{t.TempDir()}, parts...)...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if strings.HasPrefix(d, os.TempDir()+"/") {
			os.Chmod(d, 0o755)
		}
	}
	return dir
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startStopsAtOnce runs a server that cannot start under pol and checks
// that the host's requests get one -31102 each naming want, that only one
// process was started, and that it did not wait out the restart backoff.
func startStopsAtOnce(t *testing.T, cmd []string, want ...string) {
	t.Helper()
	pol := testPolicy(cmd)
	pol.RestartBackoff.Min, pol.RestartBackoff.Max = 5*time.Second, 5*time.Second // a crash loop would take 20s
	began := time.Now()
	r := startRelay(t, pol)
	h := r.rawHost()
	h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	stopped := r.waitEvent(supervisor.EventStopped)
	if took := time.Since(began); took > 4*time.Second {
		t.Errorf("stopped after %s: the restart backoff was waited out", took)
	}
	for _, id := range []string{`0`, `1`} {
		var resp map[string]json.RawMessage
		if id == `0` {
			resp = h.response(id)
		} else {
			resp = h.call(id, "tools/list", `{}`)
		}
		if errorCode(resp) != supervisor.CodeServerStopped {
			t.Errorf("request %s: %s, want error %d", id, resp, supervisor.CodeServerStopped)
		}
		for _, w := range want {
			if !strings.Contains(string(resp["error"]), w) {
				t.Errorf("request %s: error %s does not name %q", id, resp["error"], w)
			}
		}
	}
	if stopped.Generation != 1 {
		t.Errorf("stopped at generation %d: the server was restarted", stopped.Generation)
	}
	out := r.end()
	if !out.Failed || out.Restarts != 0 {
		t.Errorf("outcome %+v, want non-zero and no restart", out)
	}
	h.checkOneAnswerEach()
}

// A python script whose directory is not granted: python says it cannot
// open it; the host hears which path, that it is not granted and the grant.
func TestStartFailureScriptNotGranted(t *testing.T) {
	dir := hostDir(t, "tools")
	script := filepath.Join(dir, "server.py")
	writeFile(t, script, "print('never runs')\n")
	startStopsAtOnce(t, []string{"/usr/bin/python3", script},
		"could not open "+script, "not granted", "ReadOnly "+dir, "filesystem.ro")
}

// A script that does not exist, on the host either (`run -- node x.js`
// with a typo): one answer naming the path at once, not a crash loop of
// six starts.
func TestStartFailureScriptMissingEverywhere(t *testing.T) {
	dir := hostDir(t, "proj")
	startStopsAtOnce(t, []string{"node", filepath.Join(dir, "x.js")}, filepath.Join(dir, "x.js")+" does not exist, on the host either")
	startStopsAtOnce(t, []string{"/usr/bin/python3", filepath.Join(dir, "x.py")}, filepath.Join(dir, "x.py")+" does not exist, on the host either")
}

// A node package not granted: the grant named is the package's root, where
// node resolves its node_modules from.
func TestStartFailureNodePackageNotGranted(t *testing.T) {
	pkg := hostDir(t, "pkg")
	dist := filepath.Join(pkg, "dist")
	os.Mkdir(dist, 0o755)
	writeFile(t, filepath.Join(pkg, "package.json"), `{"name":"pkg","type":"module"}`)
	entry := filepath.Join(dist, "index.js")
	writeFile(t, entry, "console.log('never runs')\n")
	startStopsAtOnce(t, []string{"node", entry}, "could not open "+entry, "ReadOnly "+pkg+" ")
}

// A server that exits saying it needs a variable the policy does not pass
// (gitlab without its token): one answer naming the variable and the flag
// that passes it, at once, not after a crash loop.
func TestStartFailureVariableNotPassed(t *testing.T) {
	t.Setenv("MCPSANDBOX_TEST_TOKEN", "dummy")
	startStopsAtOnce(t, []string{"sh", "-c", "echo 'Error: MCPSANDBOX_TEST_TOKEN environment variable is not set' >&2; exit 1"},
		"needs the environment variable MCPSANDBOX_TEST_TOKEN", "does not pass on", "Env MCPSANDBOX_TEST_TOKEN")
	startStopsAtOnce(t, []string{"sh", "-c", "echo 'Error: MCPSANDBOX_UNSET_KEY is required' >&2; exit 1"},
		"needs the environment variable MCPSANDBOX_UNSET_KEY, which is not set", "Env MCPSANDBOX_UNSET_KEY")
}

// server-memory granted read-only starts, then fails each change writing
// its graph beside its code: the tool error the host gets says which file
// and how to give it a writable place.
func TestToolErrorOfAReadOnlyGrantSaysHowToFixIt(t *testing.T) {
	pol := npmPolicy(t, "server-memory")
	r := startRelay(t, pol)
	cs := r.sdkClient("", nil)
	res, err := callTool(t, cs, "create_entities", map[string]any{"entities": []map[string]any{
		{"name": "mcpsandbox", "entityType": "project", "observations": []string{"relays MCP"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	text := toolText(t, res)
	dist := filepath.Dir(testenv.NPMServer(t, "server-memory"))
	for _, want := range []string{"EROFS", "could not write " + dist + "/memory.jsonl", "granted read-only", "ReadWrite DIR", "Env MEMORY_FILE_PATH=DIR/memory.jsonl"} {
		if !res.IsError || !strings.Contains(text, want) {
			t.Errorf("tool error (isError %v) %q does not say %q", res.IsError, text, want)
		}
	}
	cs.Close()
	r.end()
}

// A crash loop with a failure mcpsandbox cannot explain: the log quotes the
// failure once and counts the repeats; the host gets one -31102 per
// request, the held initialize too, naming the last error.
func TestCrashLoopIsReportedOnce(t *testing.T) {
	pol := testPolicy([]string{"sh", "-c", "echo 'fatal: config file missing' >&2; exit 3"})
	pol.MaxRestarts = 3
	r := startRelay(t, pol)
	h := r.rawHost()
	h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	r.waitEvent(supervisor.EventStopped)
	for _, resp := range []map[string]json.RawMessage{h.response(`0`), h.call(`1`, "tools/list", `{}`)} {
		e := string(resp["error"])
		if errorCode(resp) != supervisor.CodeServerStopped || !strings.Contains(e, "crash loop") ||
			!strings.Contains(e, "fatal: config file missing") || !strings.Contains(e, "the same error 4 times") {
			t.Errorf("response %s: want %d naming the crash loop, the last error and its count", resp, supervisor.CodeServerStopped)
		}
	}
	out := r.end()
	logs := r.logs.String()
	n := 0
	for _, line := range strings.Split(logs, "\n") {
		if !strings.Contains(line, `msg="server started"`) { // its command line holds the text
			n += strings.Count(line, "fatal: config file missing")
		}
	}
	if n != 1 {
		t.Errorf("the log quotes the failure %d times, want once", n)
	}
	for _, want := range []string{"failed again (2nd time), same error", "failed again (4th time), same error"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log does not say %q", want)
		}
	}
	if out.Restarts != 3 {
		t.Errorf("outcome %+v, want 3 restarts", out)
	}
	h.checkOneAnswerEach()
}
