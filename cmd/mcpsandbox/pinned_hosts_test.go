package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/pinfixture"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// asPinnedServer makes the test binary the pin tests' fixture server, its
// contract in the next argument (internal/pinfixture).
const asPinnedServer = "-test.as-pinned-server"

// tsPinned is what testdata/tsclient/pinned.mjs prints of one session.
type tsPinned struct {
	Tools        []string                   `json:"tools"`
	Annotations  map[string]json.RawMessage `json:"annotations"`
	Instructions string                     `json:"instructions"`
	Calls        map[string]struct {
		Text    string `json:"text"`
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Source, Kind, Item, Reason string
		} `json:"data"`
	} `json:"calls"`
}

// runTSPinned runs the TypeScript SDK client against `mcpsandbox run
// --lock LOCK` of the fixture serving c, calling calls.
func runTSPinned(t *testing.T, lockPath string, c pinfixture.Contract, calls ...string) tsPinned {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (scripts/test-setup.sh installs it): the TypeScript SDK client runs in it")
	}
	plan, _ := json.Marshal(map[string]any{
		"sdk": tsSDKDir(t), "command": self(t), "calls": calls,
		"args": []string{asCLI, "run", "--unconfined", "--lock", lockPath, "--ping-interval", "0s", "--", self(t), asPinnedServer, c.Arg()},
	})
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Wait(time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(testenv.RepoRoot(t), "testdata", "tsclient", "pinned.mjs"), string(plan))
	cmd.Stderr = testenv.NewLogCapture(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pinned.mjs: %v", err)
	}
	var got tsPinned
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("pinned.mjs printed %q: %v", out, err)
	}
	return got
}

// The TypeScript SDK client as the host of `mcpsandbox run`: the first
// run pins the fixture's contract in the lock --lock names; a second,
// whose tools and instructions changed, has the changed and new tools
// absent from the client's list, their calls refused -31113 with data.kind
// held and the commands in the message, the approved instructions, and
// the safer annotations of safe shown as pinned; an unchanged tool still
// answers.
func TestPinsHoldWhatChangedFromTheTypeScriptSDKClient(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), "lock.json")
	first := runTSPinned(t, lockPath, pinfixture.First(), "echo")
	if want := []string{"add", "echo", "note", "safe", "write_file"}; !slices.Equal(first.Tools, want) {
		t.Fatalf("first run lists %v, want %v", first.Tools, want)
	}
	if first.Calls["echo"].Text != "called echo" {
		t.Errorf("first run's echo: %+v", first.Calls["echo"])
	}
	if _, err := os.Stat(lockPath); err != nil {
		t.Fatalf("the first run wrote no lock: %v", err)
	}

	got := runTSPinned(t, lockPath, pinfixture.Changed(), "echo", "exfil", "write_file", "add")
	if want := []string{"add", "safe"}; !slices.Equal(got.Tools, want) {
		t.Errorf("changed run lists %v, want %v", got.Tools, want)
	}
	if got.Instructions != pinfixture.First().Instructions {
		t.Errorf("instructions %q, want the approved %q", got.Instructions, pinfixture.First().Instructions)
	}
	if a := string(got.Annotations["safe"]); !strings.Contains(a, `"destructiveHint":true`) || strings.Contains(a, `"readOnlyHint":true`) {
		t.Errorf("safe's annotations %s, want the pinned ones (destructive, not read-only)", a)
	}
	for tool, reason := range map[string]string{"echo": "changed", "exfil": "new", "write_file": "changed"} {
		c := got.Calls[tool]
		if c.Code != -31113 || c.Data.Source != "mcpsandbox" || c.Data.Kind != "held" || c.Data.Item != "tool:"+tool || c.Data.Reason != reason {
			t.Errorf("call of %s: %+v, want -31113 with data.kind held, item tool:%s, reason %s", tool, c, tool, reason)
		}
		if !strings.Contains(c.Message, "mcpsandbox pins diff --lock "+lockPath) || !strings.Contains(c.Message, "pins approve --lock "+lockPath+" mcpsandbox.test tool:"+tool) {
			t.Errorf("call of %s: message %q does not name pins diff and pins approve", tool, c.Message)
		}
	}
	if got.Calls["add"].Text != "called add" {
		t.Errorf("the session did not go on: add gave %+v", got.Calls["add"])
	}
}

// pinnedEntry is a daemon config's entry of the fixture serving c, run by
// command (this test binary, or a script that runs it).
func pinnedEntry(t *testing.T, name, command string, c pinfixture.Contract) daemonEntry {
	return daemonEntry{name: name, keys: map[string]any{"command": command, "args": []string{asPinnedServer, c.Arg()}, "prestart": 0,
		"policy": map[string]any{"unconfined": true}}}
}

// listedTools are the tools a Go SDK client of the daemon's server name
// lists, sorted and joined by commas.
func (d *e2eDaemon) listedTools(t *testing.T, name string) string {
	t.Helper()
	names, err := d.mustConnectGo(t, name, "").tools()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// A daemon pins into the lock beside its config, and `status` names what
// an instance holds. Its two entries run one program (one identity, one
// entry in the lock) with two contracts: the first session pins the
// first's, and the second entry's changed and new tools are held.
func TestPinsDaemonStatusNamesHeldItems(t *testing.T) {
	d := startE2EDaemon(t, claudeConfig(t, pinnedEntry(t, "first", self(t), pinfixture.First()), pinnedEntry(t, "changed", self(t), pinfixture.Changed())), nil)
	list := func(name string) string { return d.listedTools(t, name) }
	if got := list("first"); got != "add,echo,note,safe,write_file" {
		t.Fatalf("first lists %s", got)
	}
	if _, err := os.Stat(strings.TrimSuffix(d.config, ".json") + ".lock.json"); err != nil {
		t.Fatalf("no lock beside the config: %v", err)
	}
	if got := list("changed"); got != "add,safe" {
		t.Errorf("changed lists %s, want add,safe", got)
	}
	st := d.status()
	var held []string
	for _, s := range st.Servers {
		for _, i := range s.Instances {
			for _, h := range i.Held {
				held = append(held, s.Name+" "+h.Item+" "+h.Reason)
			}
		}
	}
	want := "changed instructions changed,changed tool:echo changed,changed tool:exfil new,changed tool:note changed,changed tool:write_file changed"
	if got := strings.Join(held, ","); got != want {
		t.Errorf("status --json holds %q, want %q", got, want)
	}
	out, _, err := d.cli("status")
	if err != nil || !strings.Contains(out, "changed#1 holds for approval: instructions (changed), tool:echo (changed), tool:exfil (new), tool:note (changed), tool:write_file (changed); see mcpsandbox pins diff changed") {
		t.Errorf("status table: %v\n%s", err, out)
	}
}
