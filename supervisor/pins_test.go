package supervisor_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/internal/pinfixture"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// rolePinnedServer is a Go SDK server serving the contract its argv
// carries (pinfixture.Contract as JSON): the tests edit it between runs.
const rolePinnedServer = "mcpsandbox-test-role=pinned-server"

// pinRun is one session of the fixture's under the pin rule.
type pinRun struct {
	r  *relay
	cs *mcp.ClientSession
}

func startPinned(t *testing.T, c pinfixture.Contract, lockPath, mode string, with ...func(*policy.Policy)) (*pinRun, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pol := testPolicy([]string{exe, rolePinnedServer, c.Arg()})
	pol.Unconfined = true // the pin rule reads only MCP: confinement is other tests' concern
	pol.Pin = mode
	for _, f := range with {
		f(&pol)
	}
	r := startRelay(t, pol, func(o *supervisor.Options) {
		o.Name, o.ID, o.Lock = "pinned-fixture", "bin+pinned-fixture", lockPath
	})
	return &pinRun{r: r, cs: r.sdkClient("", nil)}, nil
}

func (p *pinRun) tools(t *testing.T) map[string]*mcp.Tool {
	t.Helper()
	res, err := p.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		m[tool.Name] = tool
	}
	return m
}

func (p *pinRun) close(t *testing.T) {
	t.Helper()
	p.cs.Close()
	if out := p.r.end(); out.Failed {
		t.Errorf("outcome %+v", out)
	}
}

// heldError is the -31113 a call of a held item gets, decoded.
type heldError struct {
	Source, Kind, Item, Reason string
}

func callHeld(t *testing.T, cs *mcp.ClientSession, tool string) (*jsonrpc.Error, heldError) {
	t.Helper()
	_, err := callTool(t, cs, tool, map[string]any{})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != supervisor.CodeHeld {
		t.Fatalf("call of %s: %v, want a JSON-RPC error %d", tool, err, supervisor.CodeHeld)
	}
	var d heldError
	if err := json.Unmarshal(werr.Data, &d); err != nil {
		t.Fatalf("call of %s: data %s: %v", tool, werr.Data, err)
	}
	return werr, d
}

func keys(m map[string]*mcp.Tool) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ",")
}

// A server's contract is pinned at first sight and held to it after: a
// second run that serves the same contract changes nothing; one whose
// tool schema, description or instructions changed, whose annotations
// flipped toward danger, or that grew a tool, has those left out of the
// Go SDK client's list and their calls refused -31113 (data.kind held,
// the item, the commands that show and approve it), while the session
// goes on; a flip toward safety is ignored. An approval written to the
// lock releases an item in the running session.
func TestPinsHoldWhatChangedFromTheGoSDKClient(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), "lock.json")
	first := pinfixture.First()

	run := mustPinned(t, first, lockPath, policy.PinTOFU)
	if got := keys(run.tools(t)); got != "add,echo,note,safe,write_file" {
		t.Fatalf("first run lists %s", got)
	}
	if got := mustCallTool(t, run.cs, "echo", map[string]any{"text": "x"}); got != "called echo" {
		t.Errorf("echo: %q", got)
	}
	run.close(t)
	pinned, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatalf("first run wrote no lock: %v", err)
	}
	f, err := lock.Load(lockPath)
	if err != nil {
		t.Fatalf("the lock the first run wrote does not load: %v", err)
	}
	_, s, ok := f.Server("pinned-fixture")
	if !ok {
		t.Fatalf("lock has no entry of the server:\n%s", pinned)
	}
	for _, name := range []string{"tool:add", "tool:echo", "tool:write_file", "instructions", "serverInfo", "capabilities"} {
		kind, key, _ := contract.ParseItemName(name)
		if _, ok := s.Contract.Get(kind, key); !ok {
			t.Errorf("lock does not pin %s:\n%s", name, pinned)
		}
	}
	if !s.Pending.Empty() {
		t.Errorf("first sight left items pending:\n%s", pinned)
	}

	run = mustPinned(t, first, lockPath, policy.PinTOFU)
	if got := keys(run.tools(t)); got != "add,echo,note,safe,write_file" {
		t.Errorf("unchanged second run lists %s", got)
	}
	run.close(t)
	if again, _ := os.ReadFile(lockPath); string(again) != string(pinned) {
		t.Errorf("an unchanged run rewrote the lock:\n%s\nwas:\n%s", again, pinned)
	}

	changed := pinfixture.Changed()
	auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
	run = mustPinned(t, changed, lockPath, policy.PinTOFU, func(p *policy.Policy) { p.AuditLog = auditLog })
	if got := run.cs.InitializeResult().Instructions; got != first.Instructions {
		t.Errorf("host got instructions %q, want the approved %q", got, first.Instructions)
	}
	tools := run.tools(t)
	if got := keys(tools); got != "add,safe" {
		t.Errorf("changed run lists %s, want add,safe (echo, note, write_file changed, exfil new)", got)
	}
	if a := tools["safe"].Annotations; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("safe's flip toward safety: host sees %+v, want the pinned annotations", a)
	}
	for tool, reason := range map[string]string{"echo": "changed", "note": "changed", "write_file": "changed", "exfil": "new"} {
		werr, d := callHeld(t, run.cs, tool)
		if d.Source != "mcpsandbox" || d.Kind != "held" || d.Item != "tool:"+tool || d.Reason != reason {
			t.Errorf("call of %s: data %+v, want kind held, item tool:%s, reason %s", tool, d, tool, reason)
		}
		for _, want := range []string{"tool \"" + tool + "\" of pinned-fixture is held for approval (" + reason, "see it with `mcpsandbox pins diff --lock " + lockPath + " pinned-fixture`", "approve it with `mcpsandbox pins approve --lock " + lockPath + " pinned-fixture tool:" + tool + "`"} {
			if !strings.Contains(werr.Message, want) {
				t.Errorf("call of %s: message %q does not name %q", tool, werr.Message, want)
			}
		}
	}
	if got := mustCallTool(t, run.cs, "add", map[string]any{"a": 1, "b": 2}); got != "called add" {
		t.Errorf("the session did not go on: add gave %q", got)
	}
	f, err = lock.Load(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	_, s, _ = f.Server("bin+pinned-fixture")
	for _, name := range []string{"tool:echo", "tool:note", "tool:write_file", "tool:exfil", "instructions"} {
		kind, key, _ := contract.ParseItemName(name)
		if _, ok := s.Pending.Get(kind, key); !ok {
			t.Errorf("lock's pending lacks %s", name)
		}
	}
	if _, ok := s.Pending.Get(contract.Tool, "safe"); ok {
		t.Error("a flip toward safety is pending")
	}

	// What `pins approve pinned-fixture tool:echo` writes: the running
	// session lists and calls it from its next list on.
	err = lock.Update(lockPath, func(f *lock.File) error {
		f.Servers["bin+pinned-fixture"].Approve(contract.Tool, "echo")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(run.tools(t)); got != "add,echo,safe" {
		t.Errorf("after approving echo the session lists %s", got)
	}
	if got := mustCallTool(t, run.cs, "echo", map[string]any{"text": "x", "secret": "y"}); got != "called echo" {
		t.Errorf("approved echo: %q", got)
	}
	run.close(t)
	audited, _ := os.ReadFile(auditLog)
	if !strings.Contains(string(audited), `"held":"tool:write_file","outcome":"held","code":-31113`) {
		t.Errorf("audit log does not name the held item of a refused call:\n%s", audited)
	}
	st := run.r.session().Status()
	var held []string
	for _, h := range st.Held {
		held = append(held, h.Item+" "+h.Reason)
	}
	if got := strings.Join(held, ","); got != "instructions changed,tool:exfil new,tool:note changed,tool:write_file changed" {
		t.Errorf("status holds %s", got)
	}
}

func mustPinned(t *testing.T, c pinfixture.Contract, lockPath, mode string, with ...func(*policy.Policy)) *pinRun {
	t.Helper()
	run, err := startPinned(t, c, lockPath, mode, with...)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// approveAll is what `mcpsandbox pins approve NAME` writes: every pending
// item of the server approved.
func approveAll(t *testing.T, lockPath, id string) {
	t.Helper()
	err := lock.Update(lockPath, func(f *lock.File) error {
		f.Servers[id].ApproveAll()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Under pin mode strict a server the lock does not pin shows the host
// nothing: no tools, no instructions, every call refused -31113 "unpinned";
// what it served is pending in the lock, and approving it lets the running
// session list and call it.
func TestPinsStrictRefusesAnUnpinnedServer(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), "lock.json")
	run := mustPinned(t, pinfixture.First(), lockPath, policy.PinStrict)
	if got := run.cs.InitializeResult().Instructions; got != "" {
		t.Errorf("host got the instructions %q of an unpinned server", got)
	}
	if got := keys(run.tools(t)); got != "" {
		t.Errorf("unpinned server lists %s under strict", got)
	}
	werr, d := callHeld(t, run.cs, "echo")
	if d.Kind != "held" || d.Reason != "unpinned" || d.Item != "tool:echo" {
		t.Errorf("call under strict: data %+v", d)
	}
	if want := "approve it with `mcpsandbox pins approve --lock " + lockPath + " pinned-fixture --all`"; !strings.Contains(werr.Message, want) {
		t.Errorf("message %q does not name %q", werr.Message, want)
	}
	approveAll(t, lockPath, "bin+pinned-fixture")
	if got := keys(run.tools(t)); got != "add,echo,note,safe,write_file" {
		t.Errorf("after approval the session lists %s", got)
	}
	if got := mustCallTool(t, run.cs, "echo", map[string]any{"text": "x"}); got != "called echo" {
		t.Errorf("approved echo: %q", got)
	}
	run.close(t)
}

// A lock that does not load refuses the start with its file:line:col, and
// is left as it is: never re-pinned.
func TestPinsCorruptLockRefusesTheStart(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), "lock.json")
	bad := "{\n  \"version\": 1,\n  \"servers\": {\n    \"bin+pinned-fixture\": {,\n"
	if err := os.WriteFile(lockPath, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	pol := testPolicy([]string{exe, rolePinnedServer, "{}"})
	pol.Unconfined = true
	_, err := supervisor.Run(context.Background(), supervisor.Options{Name: "pinned-fixture", ID: "bin+pinned-fixture", Lock: lockPath, Policy: pol, HostIn: strings.NewReader(""), HostOut: io.Discard})
	if err == nil || !strings.Contains(err.Error(), lockPath+":4:") {
		t.Fatalf("start with a corrupt lock: %v, want an error naming %s:4:COL", err, lockPath)
	}
	if got, _ := os.ReadFile(lockPath); string(got) != bad {
		t.Errorf("the corrupt lock was rewritten:\n%s", got)
	}
}

// A real npm server, confined: @modelcontextprotocol/server-memory is
// pinned at its first run (every tool, its serverInfo and capabilities in
// the lock) and a second run of the same package changes nothing: all its
// tools listed and callable, the lock not rewritten.
func TestPinsServerMemoryFromNPM(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), "lock.json")
	const id = "npm+@modelcontextprotocol+server-memory"
	var firstTools string
	var pinned []byte
	for run := 1; run <= 2; run++ {
		pol := npmPolicy(t, "server-memory")
		dir := writableBySandbox(t, t.TempDir())
		pol.ReadWrite = []string{dir}
		pol.Env = []string{"MEMORY_FILE_PATH=" + filepath.Join(dir, "memory.jsonl")}
		r := startRelay(t, pol, func(o *supervisor.Options) {
			o.Name, o.ID, o.Lock = "@modelcontextprotocol/server-memory", id, lockPath
		})
		cs := r.sdkClient("", nil)
		listed := (&pinRun{r: r, cs: cs}).tools(t)
		tools := keys(listed)
		if got := mustCallTool(t, cs, "read_graph", nil); !strings.Contains(got, "entities") {
			t.Errorf("run %d: read_graph: %q", run, got)
		}
		cs.Close()
		r.end()
		lockText, err := os.ReadFile(lockPath)
		if err != nil {
			t.Fatalf("run %d wrote no lock: %v", run, err)
		}
		if run == 1 {
			firstTools, pinned = tools, lockText
			f, err := lock.Load(lockPath)
			if err != nil {
				t.Fatal(err)
			}
			s := f.Servers[id]
			if s == nil {
				t.Fatalf("first run pinned nothing of %s:\n%s", id, lockText)
			}
			if len(s.Contract.Tools) != len(listed) || len(listed) < 5 || s.Contract.ServerInfo == nil {
				t.Fatalf("first run pinned %d tools of %d listed (%s):\n%s", len(s.Contract.Tools), len(listed), tools, lockText)
			}
			continue
		}
		if tools != firstTools {
			t.Errorf("second run lists %s, first %s", tools, firstTools)
		}
		if string(lockText) != string(pinned) {
			t.Errorf("second run rewrote the lock:\n%s\nwas:\n%s", lockText, pinned)
		}
	}
}

// --approve-annotated counts what the lock pins from the session's start:
// the fixture's "safe" tool is pinned destructive, so a call of it before
// any tools/list waits for a person (-31114: the Go SDK client declares no
// elicitation), while "write_file", pinned not destructive, goes through.
func TestPinnedAnnotationsTierACallBeforeAnyList(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), "lock.json")
	first := mustPinned(t, pinfixture.First(), lockPath, policy.PinTOFU)
	first.tools(t)
	first.close(t)

	run := mustPinned(t, pinfixture.First(), lockPath, policy.PinTOFU, func(p *policy.Policy) {
		p.ApproveAnnotated = []string{policy.ApproveDestructive}
	})
	defer run.close(t)
	_, err := callTool(t, run.cs, "safe", map[string]any{"path": "/srv/a"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != supervisor.CodeApprovalRequired {
		t.Errorf("safe, pinned destructive, called before any list: %v, want error %d", err, supervisor.CodeApprovalRequired)
	}
	if _, err := callTool(t, run.cs, "write_file", map[string]any{"path": "/srv/a"}); err != nil {
		t.Errorf("write_file, pinned not destructive: %v", err)
	}
}
