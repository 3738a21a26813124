package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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
// to refill), and its first tools/call too: the call's audit record
// carries the session the warm instance opened, and the process is the
// same after it.
func TestDaemonWarmNPXInstanceServesTheFirstClient(t *testing.T) {
	requireConfinement(t)
	testenv.NPMServer(t, "server-memory") // the npm tier; skips under -short
	base := newStateBase(t)
	base.prepare(t, "npx", "-y", memoryPkg)
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	d := startE2EDaemon(t, claudeConfig(t, daemonEntry{"memory", map[string]any{
		"command": "npx", "args": []string{"-y", memoryPkg},
		"prestart": 1, "max-instances": 1,
		"policy": map[string]any{"audit": map[string]any{"file": auditFile}},
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
	session := auditedSession(t, auditFile, "create_entities")
	if lines := d.logLines(`msg="audit log opened"`, "session="+session); len(lines) != 1 || logValue(lines[0], "instance") != warm.ID {
		t.Errorf("the audit record of the call is session %s; the daemon's log says that session is %q, want %s's", session, lines, warm.ID)
	}
}

// auditedSession waits for the audit record of a tools/call of tool and
// returns its session.
func auditedSession(t *testing.T, file, tool string) string {
	t.Helper()
	deadline := time.Now().Add(daemonWait)
	for {
		data, _ := os.ReadFile(file)
		s := bufio.NewScanner(bytes.NewReader(data))
		for s.Scan() {
			var r struct {
				Session, Method, Tool, Outcome string
			}
			if json.Unmarshal(s.Bytes(), &r) == nil && r.Method == "tools/call" && r.Tool == tool {
				if r.Outcome != string(audit.Answered) {
					t.Errorf("audit record of %s: outcome %q", tool, r.Outcome)
				}
				return r.Session
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit record of a tools/call of %s in %s within %v:\n%s", tool, file, daemonWait, data)
		}
		time.Sleep(20 * time.Millisecond) // the writer's queue drains behind the call's answer
	}
}
