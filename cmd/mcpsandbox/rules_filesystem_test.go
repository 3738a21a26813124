package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// The MCP rules end to end on server-filesystem, started as `node` of the
// installed package with no --policy (its built-in grants the directory it
// serves): tool allow and deny lists, the prefix, a rate limit and a call
// timeout as the host sees them, and the audit file's line for each call.
func TestRulesOnServerFilesystem(t *testing.T) {
	requireConfinement(t)
	entry := testenv.NPMServer(t, "server-filesystem")
	b := newStateBase(t)
	dir := sandboxDir(t, "mcpsandbox-rules-fs-")
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(testenv.SharedDir(t, "mcpsandbox-rules-audit-"), "audit.jsonl")
	s := b.mustStart(t, "--allow-tool", "read_*", "--allow-tool", "list_*", "--allow-tool", "write_file",
		"--deny-tool", "read_media_file", "--tool-prefix", "fs_", "--rate-limit", "list_directory=2/1h",
		"--call-timeout", "30s", "--audit-log", audit, "--", "node", entry, dir)
	if got := s.policyLogged(); got != "filesystem" {
		t.Errorf("policy %q, want the built-in filesystem", got)
	}
	tools := s.toolNames(t)
	for _, want := range []string{"fs_read_text_file", "fs_list_directory", "fs_write_file", "fs_list_allowed_directories"} {
		if !tools[want] {
			t.Errorf("tools/list %v lacks %s", tools, want)
		}
	}
	for name := range tools {
		if !strings.HasPrefix(name, "fs_") || name == "fs_read_media_file" || name == "fs_edit_file" || name == "fs_move_file" {
			t.Errorf("tools/list shows %s: want fs_ names of allowed, undenied tools only", name)
		}
	}

	if got := s.mustCall(t, "fs_read_text_file", map[string]any{"path": filepath.Join(dir, "note.txt")}); got != "hello" {
		t.Errorf("fs_read_text_file answered %q", got)
	}
	// write_file waits for a person under the built-in's approval tier (a
	// tier names the server's own tools): this host cannot be asked, so
	// the call gets an id to approve, and is written only after.
	notYet := func() {
		if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
			t.Error("write_file wrote before it was approved")
		}
	}
	if got, failed := s.callApproved(t, "fs_write_file", map[string]any{"path": filepath.Join(dir, "out.txt"), "content": "written"}, notYet); failed {
		t.Fatalf("fs_write_file, approved: %s", got)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(data) != "written" {
		t.Errorf("the allowed write left %q (%v) on the host", data, err)
	}
	rpcErr := func(tool string, args map[string]any) int64 {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		_, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			t.Fatalf("%s: %v, want a JSON-RPC error", tool, err)
		}
		return werr.Code
	}
	moved := map[string]any{"source": filepath.Join(dir, "note.txt"), "destination": filepath.Join(dir, "gone.txt")}
	if code := rpcErr("fs_move_file", moved); code != supervisor.CodePolicyDenied {
		t.Errorf("fs_move_file (not allowed): code %d, want %d", code, supervisor.CodePolicyDenied)
	}
	if _, err := os.Stat(filepath.Join(dir, "note.txt")); err != nil {
		t.Errorf("the denied move reached the server: %v", err)
	}
	if code := rpcErr("fs_read_media_file", map[string]any{"path": filepath.Join(dir, "note.txt")}); code != supervisor.CodePolicyDenied {
		t.Errorf("fs_read_media_file (denied): code %d", code)
	}
	if code := rpcErr("read_text_file", map[string]any{"path": filepath.Join(dir, "note.txt")}); code != -32602 {
		t.Errorf("read_text_file without the prefix: code %d, want -32602", code)
	}
	s.mustCall(t, "fs_list_directory", map[string]any{"path": dir})
	s.mustCall(t, "fs_list_directory", map[string]any{"path": dir})
	if code := rpcErr("fs_list_directory", map[string]any{"path": dir}); code != supervisor.CodeRateLimited {
		t.Errorf("third fs_list_directory in the hour: code %d, want %d", code, supervisor.CodeRateLimited)
	}
	s.stop()

	// The audit file is closed with the session: one line per call.
	st, err := os.Stat(audit)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("audit log: %v, mode %v; want 0600", err, st)
	}
	outcomes := auditOutcomes(t, audit)
	want := []string{"fs_read_text_file ok", "fs_write_file approval-required -31114 deferred:required", "fs_write_file ok deferred:allow-once", "fs_move_file denied -31107", "fs_read_media_file denied -31107",
		"read_text_file error -32602", "fs_list_directory ok", "fs_list_directory ok", "fs_list_directory rate-limited -31109"}
	if strings.Join(outcomes, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit lines:\n%s\nwant:\n%s", strings.Join(outcomes, "\n"), strings.Join(want, "\n"))
	}
}

// auditOutcomes reads an audit file as "tool outcome [code]
// [channel:decision]" per line.
func auditOutcomes(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			From     string `json:"from"`
			Tool     string `json:"tool"`
			Outcome  string `json:"outcome"`
			Code     int    `json:"code"`
			Approval *struct{ Channel, Decision string }
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if l.From == "server" {
			continue // server-filesystem's own roots/list, decided as it came: not one of the host's calls
		}
		s := l.Tool + " " + l.Outcome
		if l.Code != 0 {
			s += " " + strconv.Itoa(l.Code)
		}
		if a := l.Approval; a != nil {
			s += " " + a.Channel + ":" + a.Decision
		}
		out = append(out, s)
	}
	return out
}
