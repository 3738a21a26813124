package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Every run flag's field has a policy-file key and every key's field a run
// flag: flag ↔ field ↔ key, one to one (each half is checked against
// Policy by runflags_test.go and the policy package).
func TestPolicyKeysAndFlagsMapOneToOne(t *testing.T) {
	flagOfField := map[string]string{}
	for _, f := range runFlags {
		flagOfField[f.Field] = f.Name
		if policy.KeyOf(f.Field) == f.Field {
			t.Errorf("--%s sets Policy.%s, which no policy-file key sets", f.Name, f.Field)
		}
	}
	for _, k := range policy.Keys() {
		if _, ok := flagOfField[k.Field]; !ok {
			t.Errorf("%s sets Policy.%s, which no run flag sets", k.Path(), k.Field)
		}
	}
	// --env is both env.pass and env.set.
	if n, m := len(runFlags), len(policy.Keys())-1; n != m {
		t.Errorf("%d run flags, %d policy-file keys", n, m)
	}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func settle(t *testing.T, args ...string) (policy.Policy, string, bool) {
	t.Helper()
	var errOut bytes.Buffer
	r, _, ok := runPolicy("run", args, stdio{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errOut})
	return r.Policy, errOut.String(), ok
}

// Flags given beside --policy override the file; flags not given leave it.
func TestFlagsOverrideThePolicyFile(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "p.yaml", "limits:\n  memory: 300MiB\n  pids: 10\nfilesystem:\n  ro: [\"${ARG1}\"]\nnetwork: {mode: host}\n")
	p, stderr, ok := settle(t, "--policy", file, "--pids", "64", "--ro", "/b", "--net", "none", "--", "srv", "/data")
	if !ok {
		t.Fatalf("run refused: %s", stderr)
	}
	if p.Memory != 300*policy.MiB || p.Pids != 64 || p.Net != policy.NetNone {
		t.Errorf("memory %v pids %d net %s; want 300MiB from the file, 64 and none from the flags", p.Memory, p.Pids, p.Net)
	}
	if want := []string{"/data", "/b"}; !reflect.DeepEqual(p.ReadOnly, want) {
		t.Errorf("ro = %q, want the file's %q", p.ReadOnly, want)
	}
	if !reflect.DeepEqual(p.Command, []string{"srv", "/data"}) {
		t.Errorf("command = %q", p.Command)
	}
	if p, stderr, ok := settle(t, "--policy", "default", "--", "srv"); !ok || !reflect.DeepEqual(p.Memory, policy.Default().Memory) {
		t.Errorf("--policy default: ok=%v %s", ok, stderr)
	}
}

// A broken policy file exits 2 naming the key at file:line:col; fields the
// command line set are named as flags.
func TestPolicyFileErrorsExit2AtTheKey(t *testing.T) {
	dir := t.TempDir()
	typo := writeFile(t, dir, "typo.yaml", "limits:\n  memroy: 1GiB\n")
	pings := writeFile(t, dir, "pings.yaml", "health:\n  ping-interval: 1s\n")
	small := writeFile(t, dir, "small.yaml", "\nlimits:\n  nofile: 3\n")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--policy", typo, "--", "srv"}, []string{typo + ":2:3: unknown key \"memroy\" in limits: did you mean memory?"}},
		{[]string{"--policy", small, "--", "srv"}, []string{small + ":3:3: limits.nofile 3: is too small for any server: use at least 16"}},
		{[]string{"--policy", small, "--nofile", "2", "--", "srv"}, []string{"--nofile 2: is too small"}},
		{[]string{"--policy", pings, "--ping-timeout", "0s", "--", "srv"}, []string{"--ping-timeout: must be positive while pings are on (health.ping-interval 1s)"}},
		{[]string{"--policy", "strict", "--", "srv"}, []string{`--policy strict: no built-in policy "strict" (built-ins: brave-search, default,`, "./strict"}},
		{[]string{"--policy", filepath.Join(dir, "none.yaml"), "--", "srv"}, []string{"no such file " + filepath.Join(dir, "none.yaml")}},
	} {
		stdout, stderr, code := runCLI(t, append([]string{"run"}, tc.args...)...)
		if code != exitUsage || stdout != "" {
			t.Errorf("run %q: exit %d, stdout %q; want %d and nothing", tc.args, code, stdout, exitUsage)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("run %q: stderr %q\nlacks %q", tc.args, stderr, w)
			}
		}
	}
}

// The examples of `run --help` are command lines that run accepts as
// written (the policy-file one given a notes.yaml).
func TestRunExamplesAreAccepted(t *testing.T) {
	t.Chdir(t.TempDir())
	writeFile(t, ".", "notes.yaml", "filesystem:\n  rw: [\"${ARG3}\"]\n")
	for _, ex := range runPage().Examples {
		args, ok := strings.CutPrefix(ex.Command, "mcpsandbox run ")
		if !ok {
			t.Errorf("example %q is not a run command line", ex.Command)
			continue
		}
		if _, stderr, ok := settle(t, strings.Fields(args)...); !ok {
			t.Errorf("example %q: %s", ex.Command, stderr)
		}
	}
}
