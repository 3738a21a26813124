package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --audit-log and --audit-mask reach the relay: the call is one line of the
// file, mode 0600, the masked argument never in clear.
func TestRunAuditLogFlags(t *testing.T) {
	requireConfinement(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	m := startRun(t, "--audit-log", path, "--audit-mask", "te?t", "--audit-max-size", "1MiB")
	if got := m.call(t, "echo", map[string]any{"text": "SECRET-ECHO"}); got != "SECRET-ECHO" {
		t.Errorf("echo answered %q", got)
	}
	m.cs.Close()
	if code := m.wait(t); code != exitOK {
		t.Fatalf("exit status %d, want 0; stderr:\n%s", code, m.stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "SECRET-ECHO") {
		t.Errorf("the masked argument is in the audit log:\n%s", data)
	}
	var line struct {
		Tool      string
		Outcome   string
		Arguments map[string]any
	}
	if err := json.Unmarshal(data, &line); err != nil || line.Tool != "echo" || line.Outcome != "ok" || line.Arguments["text"] != "***" {
		t.Errorf("audit log %s (%v): want one line of echo, ok, text masked", data, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode %v, want 0600", fi.Mode().Perm())
	}
}

// An audit log mcpsandbox cannot open stops run at the start, naming
// --audit-log and the fix.
func TestRunAuditLogUnwritableFailsAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "audit.log")
	_, stderr, code := runCLI(t, "run", "--audit-log", path, "--", "/bin/true")
	if code != exitUsage || !strings.Contains(stderr, "--audit-log "+path+": cannot be opened") || !strings.Contains(stderr, "leave --audit-log out") {
		t.Errorf("exit %d, stderr:\n%s\nwant status %d naming --audit-log and the fix", code, stderr, exitUsage)
	}
	if strings.Contains(stderr, "server started") {
		t.Errorf("the server was started:\n%s", stderr)
	}
}
