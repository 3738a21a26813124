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

// check reads a file as run does: a file extending any built-in passes
// (npx's and uvx's use ${STATE}, which run knows), a file using the
// server's arguments passes although check knows none, and a typo in a
// file extending a built-in is reported at the typo.
func TestPolicyCheckAcceptsWhatRunAccepts(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, name := range builtinNames() {
		files = append(files, writeFile(t, dir, "extends-"+name+".yaml", "extends: "+name+"\nlimits:\n  memory: 512MiB\n"))
	}
	// README's github.yaml and docs/policy.md's notes.yaml, as written there.
	files = append(files,
		writeFile(t, dir, "github.yaml", "# github.yaml\nextends: github\nenv:\n  pass: [GITHUB_TOKEN]\nlimits:\n  memory: 512MiB\nmcp:\n  deny-tools: [\"delete_*\", \"merge_*\"]\n"),
		writeFile(t, dir, "notes.yaml", "extends: npx\nfilesystem:\n  rw: [\"${ARG3}\"]\nlimits:\n  memory: 512MiB\n  pids: 64\n"))
	stdout, stderr, code := runCLI(t, append([]string{"policy", "check"}, files...)...)
	if code != exitOK || stderr != "" {
		t.Errorf("policy check: exit %d, stderr %q; want every file ok", code, stderr)
	}
	for _, f := range files {
		if !strings.Contains(stdout, f+": ok\n") {
			t.Errorf("policy check does not say %s: ok:\n%s", f, stdout)
		}
	}

	typo := writeFile(t, dir, "typo.yaml", "extends: npx\nlimits:\n  memroy: 512MiB\n")
	_, stderr, code = runCLI(t, "policy", "check", typo)
	if want := typo + `:3:3: unknown key "memroy" in limits: did you mean memory?`; code != exitFailure || !strings.Contains(stderr, want) {
		t.Errorf("policy check %s: exit %d, stderr %q; want 1 and %q", typo, code, stderr, want)
	}
}
