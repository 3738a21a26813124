package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/supervisor/audit"
)

// An npx server with prestart 1 (server-memory, prepared, then offline):
// once status shows its instance warm, a host attaching through connect
// has its initialize answered by that process, no other started (status
// and the log show the one pid; max-instances 1 leaves the pool no room
// to refill), and its first tools/call too: `mcpsandbox logs` shows the
// call's audit line under the warm instance, and the process is the same
// after it.
func TestDaemonWarmNPXInstanceServesTheFirstClient(t *testing.T) {
	requireConfinement(t)
	testenv.NPMServer(t, "server-memory") // the npm tier; skips under -short
	base := newStateBase(t)
	base.prepare(t, "npx", "-y", memoryPkg)
	d := startE2EDaemon(t, claudeConfig(t, daemonEntry{"memory", map[string]any{
		"command": "npx", "args": []string{"-y", memoryPkg},
		"prestart": 1, "max-instances": 1,
	}}), base.env)

	warmSince := time.Now()
	var warm daemon.InstanceStatus
	d.waitStatus("memory's instance warm", func(st *daemon.Status) bool {
		s, _ := serverStatus(st, "memory")
		if len(s.Instances) == 1 {
			warm = s.Instances[0]
		}
		return warm.State == "warm" && warm.Pid != 0
	})
	t.Logf("%s warm, pid %d, %v after the daemon listened", warm.ID, warm.Pid, time.Since(warmSince).Round(time.Millisecond))
	if line := d.waitLog("instance warm", "instance="+warm.ID); logValue(line, "pid") != strconv.Itoa(warm.Pid) {
		t.Errorf("the daemon logged %s warm with another pid than status's %d: %s", warm.ID, warm.Pid, line)
	}

	begin := time.Now()
	h := d.mustConnectGo(t, "memory", "2025-11-25")
	took := time.Since(begin)
	t.Logf("attach through connect to initialize answered by the warm instance: %v", took.Round(time.Millisecond))
	if got := h.protocol(); got != "2025-11-25" {
		t.Errorf("initialize answered with protocol %q", got)
	}
	checkOneProcess := func(when string) {
		t.Helper()
		s, _ := serverStatus(d.status(), "memory")
		if len(s.Instances) != 1 {
			t.Fatalf("%s: memory has instances %+v, want the warm one alone", when, s.Instances)
		}
		i := s.Instances[0]
		if i.ID != warm.ID || i.Pid != warm.Pid || i.Generation != 1 || i.Restarts != 0 || i.State != "running" || i.ClientPid == nil || *i.ClientPid != h.pid() {
			t.Errorf("%s: memory's instance is %+v; want %s, pid %d, generation 1, running, for connect pid %d", when, i, warm.ID, warm.Pid, h.pid())
		}
		var pids []string
		for _, line := range d.logLines(`msg="server started"`) {
			pids = append(pids, logValue(line, "instance")+" pid "+logValue(line, "pid"))
		}
		if want := warm.ID + " pid " + strconv.Itoa(warm.Pid); len(pids) != 1 || pids[0] != want {
			t.Errorf("%s: the daemon's log says servers started: %q; want the warm one alone, %s", when, pids, want)
		}
	}
	checkOneProcess("after initialize")
	if lines := d.logLines("client attached", "instance="+warm.ID); len(lines) != 1 {
		t.Errorf("the daemon's log does not say once that the client got %s: %q", warm.ID, lines)
	}

	entity := map[string]any{"name": "warm-pool", "entityType": "e2e", "observations": []string{"answered by the warm process"}}
	if text, isErr, err := h.call("create_entities", map[string]any{"entities": []any{entity}}); err != nil || isErr || !strings.Contains(text, "warm-pool") {
		t.Fatalf("the first tools/call, create_entities: %q (error result %v), %v", text, isErr, err)
	}
	checkOneProcess("after the first tools/call")
	if by, outcome := d.auditedBy(t, "memory", "create_entities"); by != warm.ID || outcome != string(audit.Answered) {
		t.Errorf("mcpsandbox logs memory says the call was served by %s, outcome %q; want the warm %s, %q", by, outcome, warm.ID, audit.Answered)
	}
}

// auditedBy waits until `mcpsandbox logs server` shows the audit line of
// a tools/call of tool, and returns the instance it names and the record.
func (d *e2eDaemon) auditedBy(t *testing.T, server, tool string) (instance string, outcome string) {
	t.Helper()
	deadline := time.Now().Add(e2eWait)
	for {
		out, errOut, err := d.cli("logs", server)
		if err != nil {
			t.Fatalf("mcpsandbox logs %s: %v: %s", server, err, errOut)
		}
		for line := range strings.SplitSeq(out, "\n") {
			rest, ok := strings.CutPrefix(line, "audit instance=")
			if !ok {
				continue
			}
			id, record, _ := strings.Cut(rest, " ")
			var r struct{ Method, Tool, Outcome string }
			if json.Unmarshal([]byte(record), &r) == nil && r.Method == "tools/call" && r.Tool == tool {
				return id, r.Outcome
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("mcpsandbox logs %s shows no audit line of a tools/call of %s within %v:\n%s", server, tool, e2eWait, out)
		}
		time.Sleep(20 * time.Millisecond) // audit lines are written behind the call's answer
	}
}
