package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

const filesystemID = "npm+@modelcontextprotocol+server-filesystem"

// askWrite records, as the relay's deferred path does, that a write_file
// call of the filesystem server waits, asked at asked for five minutes.
func askWrite(t *testing.T, path, args string, asked time.Time) (string, lock.Approval) {
	t.Helper()
	digest, err := lock.ArgumentDigest([]byte(args))
	if err != nil {
		t.Fatal(err)
	}
	a := lock.Approval{Server: filesystemID, Name: "@modelcontextprotocol/server-filesystem", Tool: "write_file",
		Digest: digest, Summary: args, Asked: asked, Expires: asked.Add(5 * time.Minute)}
	id, err := lock.AskApproval(path, a, asked)
	if err != nil {
		t.Fatal(err)
	}
	return id, a
}

// approve lists what waits, grants one call, which the next call with the
// same arguments takes once; a used, unknown or expired id exits 1 with
// the fix, and leaves the lock as it was.
func TestApproveGrantsOneCallThroughTheCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lock.json")
	out, stderr, code := pinsCLI(t, dir, "approve", "--list", "--lock", path)
	if code != exitOK || out != "no call waits for approval in "+path+"\n" {
		t.Errorf("approve --list of an empty lock: exit %d, %q, %q", code, out, stderr)
	}
	now := time.Now().UTC().Truncate(time.Second)
	args := `{"path":"/home/you/notes/todo.md","content":"***"}`
	id, a := askWrite(t, path, args, now)

	out, stderr, code = pinsCLI(t, dir, "approve", "--list", "--lock", path)
	if code != exitOK || stderr != "" {
		t.Fatalf("approve --list: exit %d, stderr %q", code, stderr)
	}
	wantLines(t, "approve --list", out,
		"lock "+path,
		id+"  write_file of @modelcontextprotocol/server-filesystem (waiting)",
		"    arguments  "+args,
		"    asked      "+now.Format(time.RFC3339))

	out, stderr, code = pinsCLI(t, dir, "approve", id, "--lock", path)
	if code != exitOK || stderr != "" {
		t.Fatalf("approve %s: exit %d, stderr %q", id, code, stderr)
	}
	wantLines(t, "approve", out,
		"approved "+id+": write_file of @modelcontextprotocol/server-filesystem, once, with these arguments:",
		"    arguments  "+args,
		"The host's next call of write_file with the same arguments goes through; other arguments are asked anew.")
	if !strings.Contains(out, "    expires    "+a.Expires.Format(time.RFC3339)+" (in 4m") && !strings.Contains(out, "(in 5m0s)") {
		t.Errorf("approve does not say when it expires:\n%s", out)
	}

	other, _ := lock.ArgumentDigest([]byte(`{"path":"/home/you/.bashrc","content":"***"}`))
	if state, _, _, err := lock.TakeApproval(path, filesystemID, "write_file", other, time.Now()); err != nil || state != lock.ApprovalNone {
		t.Errorf("a call with other arguments: %v, %v; want none", state, err)
	}
	if state, _, _, err := lock.TakeApproval(path, filesystemID, "write_file", a.Digest, time.Now()); err != nil || state != lock.ApprovalGranted {
		t.Fatalf("the call with the approved arguments: %v, %v; want granted", state, err)
	}

	before, _ := os.ReadFile(path)
	_, stderr, code = pinsCLI(t, dir, "approve", id, "--lock", path)
	if want := fmt.Sprintf("mcpsandbox approve: no approval %q is waiting in %s: check the id in the error the call got (mcpsandbox approve --list shows the waiting ones", id, path); code != exitFailure || !strings.HasPrefix(stderr, want) {
		t.Errorf("approve of a used id: exit %d, stderr %q; want 1, %s…", code, stderr, want)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a refused approve changed the lock")
	}

	old, _ := askWrite(t, path, `{"path":"/tmp/x","content":"***"}`, now.Add(-10*time.Minute))
	_, stderr, code = pinsCLI(t, dir, "approve", "--lock", path, old)
	if want := fmt.Sprintf("mcpsandbox approve: approval %s expired at %s: call the tool again to be asked anew, then approve the new id before it expires\n", old, now.Add(-5*time.Minute).Format(time.RFC3339)); code != exitFailure || stderr != want {
		t.Errorf("approve of an expired id: exit %d, stderr %q; want 1, %q", code, stderr, want)
	}
}

func TestApproveBadCommandLines(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "say which call to approve: the ID its error named (approve --list shows the waiting ones)"},
		{[]string{"abcdefghij", "--list"}, "give an ID or --list, not both"},
		{[]string{"abcdefghij", "bcdefghijk"}, "approve one ID at a time"},
	} {
		_, stderr, code := pinsCLI(t, dir, append([]string{"approve"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("approve %q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// waitingHome is pinsHome with a call of write_file waiting in the user's
// lock under the id the manual and README show.
func waitingHome(t *testing.T) func(line string) (string, int) {
	t.Helper()
	home, sh := pinsHome(t)
	path := filepath.Join(home, ".config/mcpsandbox/lock.json")
	digest, _ := lock.ArgumentDigest([]byte(`{"path":"/home/you/notes/todo.md"}`))
	now := time.Now().UTC()
	if err := lock.Update(path, func(f *lock.File) error {
		f.Approvals = map[string]*lock.Approval{"k3v7qd2mxa": {Server: filesystemID, Tool: "write_file", Digest: digest,
			Summary: `{"path":"/home/you/notes/todo.md"}`, Asked: now, Expires: now.Add(5 * time.Minute)}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return sh
}

// runApproveLines runs lines, each of which must print its want.
func runApproveLines(t *testing.T, sh func(string) (string, int), lines []string) {
	t.Helper()
	wants := map[string]string{
		"mcpsandbox approve --list":     "k3v7qd2mxa  write_file of " + filesystemID + " (waiting)",
		"mcpsandbox approve k3v7qd2mxa": "approved k3v7qd2mxa: write_file of " + filesystemID + ", once, with these arguments:",
	}
	if len(lines) != len(wants) {
		t.Fatalf("want the lines %q, have %q", wants, lines)
	}
	for _, line := range lines {
		out, code := sh(line)
		if code != exitOK {
			t.Errorf("%s: exit %d\n%s", line, code, out)
		}
		wantLines(t, line, out, wants[line])
	}
}

// The examples of `mcpsandbox help approve` work as written.
func TestApproveHelpExamplesRunAsWritten(t *testing.T) {
	runApproveLines(t, waitingHome(t), helpExamples(t, "approve"))
}

// README's Approval section's lines work as written.
func TestApproveReadmeRunsAsWritten(t *testing.T) {
	runApproveLines(t, waitingHome(t), readmeShLines(t, "Approval"))
}

// callApproved calls a tool that an approval tier holds, as a person whose
// host cannot be asked gets it through: the Go SDK client of these tests
// declares no elicitation, so the call is refused at once with -31114
// (approval-required), whose data names an id and whose message the
// command; whileHeld (if any) checks that nothing happened yet; then the
// test runs `mcpsandbox approve ID` as run was run (its environment names
// the relay's lock) and makes the same call again. It returns that call's
// text and whether it is an error result.
func (m *mcpsandbox) callApproved(t *testing.T, tool string, args map[string]any, whileHeld func()) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	we, ok := rpcError(err)
	if !ok || we.Code != supervisor.CodeApprovalRequired {
		t.Fatalf("%s under the built-in's approval tier answered %+v, %v; want error %d (approval-required)\nstderr:\n%s",
			tool, res, err, supervisor.CodeApprovalRequired, m.stderr)
	}
	var data struct {
		Kind       string `json:"kind"`
		ApprovalID string `json:"approvalId"`
	}
	if err := json.Unmarshal(we.Data, &data); err != nil || data.Kind != "approval-required" || data.ApprovalID == "" ||
		!strings.Contains(we.Message, "mcpsandbox approve "+data.ApprovalID) {
		t.Fatalf("%s held with message %q, data %s: want kind approval-required and an approvalId the message names", tool, we.Message, we.Data)
	}
	if whileHeld != nil {
		whileHeld()
	}
	if out, err := cliIn(t, m.cmd.Dir, m.cmd.Env, "approve", data.ApprovalID); err != nil {
		t.Fatalf("mcpsandbox approve %s: %v\n%s", data.ApprovalID, err, out)
	}
	return m.callResult(t, tool, args)
}
