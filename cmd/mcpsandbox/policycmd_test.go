package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policies"
)

// The policy page's examples run exactly as written, from a directory that
// holds the README's github.yaml.
func TestPolicyExamplesRunAsWritten(t *testing.T) {
	dir := t.TempDir()
	yaml := "extends: default\nnetwork:\n  mode: host\nenv:\n  pass: [GITHUB_TOKEN]\nlimits:\n  memory: 512MiB\n"
	if err := os.WriteFile(filepath.Join(dir, "github.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, ex := range policyPage().Examples {
		args := strings.Fields(ex.Command)[1:]
		stdout, stderr, code := runCLI(t, args...)
		if code != exitOK || stdout == "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", ex.Command, code, stdout, stderr)
		}
	}
}

func TestPolicyListShowsEveryBuiltinWithItsPurpose(t *testing.T) {
	stdout, _, code := runCLI(t, "policy", "list")
	entries, _ := fs.Glob(policies.FS, "*.yaml")
	if code != exitOK || len(entries) == 0 {
		t.Fatalf("policy list: exit %d, %d built-ins", code, len(entries))
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e, ".yaml")
		if !strings.Contains(stdout, name+" ") || !strings.Contains(stdout, ".") {
			t.Errorf("policy list %q lacks %s with a sentence on what it is for", stdout, name)
		}
	}
	data, _ := fs.ReadFile(policies.FS, "default.yaml")
	if show, _, code := runCLI(t, "policy", "show", "default"); code != exitOK || show != string(data) {
		t.Errorf("policy show default: exit %d, printed what is not the embedded file", code)
	}
}

func TestPolicyCheckNamesEachErrorAndFails(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("limits:\n  memory: 300MiB\n"), 0o644)
	os.WriteFile(bad, []byte("limits:\n  memroy: 1GiB\n"), 0o644)
	stdout, stderr, code := runCLI(t, "policy", "check", good, bad)
	if code != exitFailure || !strings.Contains(stdout, good+": ok") || !strings.Contains(stderr, bad+":2:3:") || !strings.Contains(stderr, "did you mean memory?") {
		t.Errorf("policy check: exit %d, stdout %q, stderr %q; want 1, the good file ok and the bad one's position and hint", code, stdout, stderr)
	}
	for _, args := range [][]string{{"policy"}, {"policy", "show", "nope"}, {"policy", "show", "./x.yaml"}, {"policy", "check"}, {"policy", "frob"}} {
		if _, stderr, code := runCLI(t, args...); code != exitUsage || !strings.Contains(stderr, "help policy") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and the way to the manual", args, code, stderr)
		}
	}
}
