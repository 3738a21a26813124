package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// The TypeScript SDK client's half of the error-code tests
// (codes_sdk_test.go): testdata/tsclient/client.mjs, run by node with the
// SDK pinned in testdata/npm, takes every case's step and prints its
// outcome.
func TestCodesReachTheTypeScriptSDKClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (scripts/test-setup.sh installs it): the TypeScript SDK client runs in it")
	}
	sdk := tsSDKDir(t)
	type planSession struct {
		Name       string   `json:"name"`
		Command    string   `json:"command"`
		Args       []string `json:"args"`
		Dir        string   `json:"dir"`
		MaxMessage int      `json:"maxMessage"`
		MaxCalls   int      `json:"maxCalls"`
		Cases      []string `json:"cases"`
	}
	plan := struct {
		SDK      string        `json:"sdk"`
		Sessions []planSession `json:"sessions"`
	}{SDK: sdk}
	for _, s := range codeSessions {
		dir := t.TempDir()
		argv := codesArgv(t, s, dir)
		ps := planSession{Name: s.name, Command: argv[0], Args: argv[1:], Dir: dir, MaxMessage: s.maxMessage, MaxCalls: s.maxCalls}
		for _, c := range s.cases {
			ps.Cases = append(ps.Cases, c.Name)
		}
		plan.Sessions = append(plan.Sessions, ps)
	}
	planJSON, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Wait(2*time.Minute))
	defer cancel()
	script := filepath.Join(testenv.RepoRoot(t), "testdata", "tsclient", "client.mjs")
	cmd := exec.CommandContext(ctx, node, script, string(planJSON))
	stderr := testenv.NewLogCapture(t) // node's and, inherited, mcpsandbox's
	cmd.Stderr = stderr
	out, err := cmd.Output()
	got := map[string]codeOutcome{}
	for line := range bytes.Lines(out) {
		var o codeOutcome
		if err := json.Unmarshal(line, &o); err != nil {
			t.Fatalf("client.mjs printed %q: %v", line, err)
		}
		got[o.Case] = o
	}
	if err != nil {
		t.Errorf("client.mjs: %v (it printed %d of the cases)", err, len(got))
	}
	for _, s := range codeSessions {
		for _, c := range s.cases {
			t.Run(c.Name, func(t *testing.T) {
				o, ok := got[c.Name]
				if !ok {
					t.Fatal("client.mjs printed nothing for this case")
				}
				checkCodeOutcome(t, c, o)
			})
		}
	}
}

// tsSDKDir is the pinned @modelcontextprotocol/sdk (testdata/npm, or
// MCPSANDBOX_NPM_DIR as for the reference servers), or skips saying how
// to install it.
func tsSDKDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MCPSANDBOX_NPM_DIR")
	if dir == "" {
		dir = filepath.Join(testenv.RepoRoot(t), "testdata", "npm", "node_modules")
	}
	sdk := filepath.Join(dir, "@modelcontextprotocol", "sdk")
	if _, err := os.Stat(filepath.Join(sdk, "dist", "esm", "client", "index.js")); err != nil {
		t.Skipf("the TypeScript SDK is not installed in %s (%v): run scripts/test-setup.sh", dir, err)
	}
	return sdk
}
