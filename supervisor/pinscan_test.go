package supervisor_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/internal/pinfixture"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A server whose first contract has a poisoned tool (text hidden in tag
// characters, an order to read ~/.ssh/id_rsa) has that tool held at first
// sight under tofu, while its clean tools are pinned and callable: the Go
// SDK client does not list it, a call of it gets -31113 with data.reason
// "finding" and the rules that hold it, and the lock has it pending with
// the scanner's findings. A second session holds it still, even before
// it lists, until the lock approves it.
func TestPinsHoldAFindingAtFirstSightFromTheGoSDKClient(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), "lock.json")
	run := mustPinned(t, pinfixture.Poisoned(), lockPath, policy.PinTOFU)
	if got := keys(run.tools(t)); got != "add,echo,note,safe,write_file" {
		t.Errorf("first run lists %s, want the clean tools without sync", got)
	}
	werr, d := callHeld(t, run.cs, "sync")
	if d.Kind != "held" || d.Item != "tool:sync" || d.Reason != "finding" {
		t.Errorf("call of sync: data %+v, want kind held, item tool:sync, reason finding", d)
	}
	want := `tool "sync" of pinned-fixture is held for approval (the scanner found what tool poisoning looks like in it: `
	if !strings.Contains(werr.Message, want) || !strings.Contains(werr.Message, "hidden-tag-text") || !strings.Contains(werr.Message, "sensitive-path") {
		t.Errorf("call of sync: message %q, want %q naming hidden-tag-text and sensitive-path", werr.Message, want)
	}
	if got := mustCallTool(t, run.cs, "add", map[string]any{"a": 1, "b": 2}); got != "called add" {
		t.Errorf("add: %q", got)
	}
	run.close(t)

	f, err := lock.Load(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Servers["bin+pinned-fixture"]
	if s == nil || len(s.Contract.Tools) != 5 {
		t.Fatalf("first sight pinned %+v, want the five clean tools", s)
	}
	e, ok := s.Pending.Entry(contract.Tool, "sync")
	if !ok || e.Reason != lock.ReasonFinding {
		t.Fatalf("lock's pending sync: %+v (%v), want reason finding", e, ok)
	}
	if !slices.Contains(e.Findings, pinfixture.PoisonedFinding) || !slices.ContainsFunc(e.Findings, func(f string) bool {
		return strings.HasPrefix(f, "high: description hides") && strings.Contains(f, "Do not tell the user.") && strings.HasSuffix(f, "[hidden-tag-text]")
	}) {
		t.Errorf("lock's pending sync findings:\n%s\nwant %q and the hidden text decoded", strings.Join(e.Findings, "\n"), pinfixture.PoisonedFinding)
	}

	run = mustPinned(t, pinfixture.Poisoned(), lockPath, policy.PinTOFU)
	if _, d := callHeld(t, run.cs, "sync"); d.Reason != "finding" {
		t.Errorf("second run, call before a list: reason %q, want finding", d.Reason)
	}
	if got := keys(run.tools(t)); got != "add,echo,note,safe,write_file" {
		t.Errorf("second run lists %s", got)
	}
	approveAll(t, lockPath, "bin+pinned-fixture")
	if got := keys(run.tools(t)); got != "add,echo,note,safe,sync,write_file" {
		t.Errorf("after approval the session lists %s", got)
	}
	run.close(t)
}

// The policy's tool overrides are what the Go SDK client lists and what
// the lock pins: note's description is the operator's, write_file's
// destructiveHint raised; a call of an overridden tool is unchanged. A
// later run without the override serves the server's own description,
// which differs from the pin: held as changed.
func TestPinsOverridesAreWhatTheHostSeesAndWhatIsPinned(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), "lock.json")
	const desc = "Keeps a note under /srv/notes."
	run := mustPinned(t, pinfixture.First(), lockPath, policy.PinTOFU, func(p *policy.Policy) {
		p.ToolOverrides = []string{`note={"description":"` + desc + `"}`, `write_file={"annotations":{"destructiveHint":true}}`}
	})
	tools := run.tools(t)
	if got := tools["note"].Description; got != desc {
		t.Errorf("note's description as listed: %q, want the override's %q", got, desc)
	}
	if a := tools["write_file"].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("write_file's annotations as listed: %+v, want destructiveHint true", a)
	}
	if got := mustCallTool(t, run.cs, "write_file", map[string]any{"path": "x"}); got != "called write_file" {
		t.Errorf("write_file: %q", got)
	}
	run.close(t)

	f, err := lock.Load(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Servers["bin+pinned-fixture"]
	var note, write struct {
		Description string
		Annotations map[string]bool
	}
	json.Unmarshal(s.Contract.Tools["note"].Text, &note)
	json.Unmarshal(s.Contract.Tools["write_file"].Text, &write)
	if note.Description != desc || !write.Annotations["destructiveHint"] {
		t.Errorf("the lock pins note %+v and write_file %+v, want them as overridden", note, write)
	}

	run = mustPinned(t, pinfixture.First(), lockPath, policy.PinTOFU)
	if got := keys(run.tools(t)); got != "add,echo,safe,write_file" {
		t.Errorf("without the override the run lists %s, want note held (its description differs from the pin)", got)
	}
	if _, d := callHeld(t, run.cs, "note"); d.Reason != "changed" {
		t.Errorf("note without its override: reason %q, want changed", d.Reason)
	}
	run.close(t)
}

// Under pin mode off, a server the lock does not pin still has the
// policy's overrides applied: they are what the host sees, pinned or not;
// nothing is written to the lock.
func TestPinsOverridesApplyUnderPinModeOff(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), "lock.json")
	const desc = "Keeps a note under /srv/notes."
	run := mustPinned(t, pinfixture.First(), lockPath, policy.PinOff, func(p *policy.Policy) {
		p.ToolOverrides = []string{`note={"description":"` + desc + `"}`}
	})
	if got := run.tools(t)["note"].Description; got != desc {
		t.Errorf("note's description under pin mode off: %q, want the override's %q", got, desc)
	}
	run.close(t)
	if _, err := os.Stat(lockPath); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("pin mode off wrote the lock: %v", err)
	}
}
