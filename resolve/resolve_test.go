package resolve

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// someoneElse is a host that is not this process's: another home, another
// working directory, another environment, as the daemon resolves for a
// user it does not run as.
func someoneElse(t *testing.T) launch.Host {
	t.Helper()
	dir := t.TempDir()
	home, wd := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	for _, d := range []string{home, wd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"PATH": "/usr/bin:/bin", "XDG_STATE_HOME": filepath.Join(home, "state")}
	return launch.Host{Home: home, WorkDir: wd, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The host's facts come from the request, not from the process: a
// relative policy file is found in the host's working directory, ${HOME}
// and the state directory are the host's.
func TestResolveForTheHostGiven(t *testing.T) {
	h := someoneElse(t)
	writeFile(t, filepath.Join(h.WorkDir, "p.yaml"), "state:\n  dir: true\nfilesystem:\n  ro: [\"${HOME}/notes\"]\nenv:\n  set:\n    DATA: ${STATE}/data\n")
	r, err := Resolve(Request{Command: []string{"npx", "-y", "some-mcp-server"}, Policy: "p.yaml", Host: h})
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(h.Home, "state", "mcpsandbox", "npm+some-mcp-server")
	if r.StateDir() != state || !slices.Contains(r.Policy.Env, "DATA="+state+"/data") {
		t.Errorf("state dir %q, env %q; want %s, from the host's XDG_STATE_HOME", r.StateDir(), r.Policy.Env, state)
	}
	if !slices.Contains(r.Policy.ReadOnly, filepath.Join(h.Home, "notes")) {
		t.Errorf("ro %q, want the host's ${HOME}/notes", r.Policy.ReadOnly)
	}
	if r.Chosen || r.Ref != "p.yaml" || !slices.Equal(r.Chain, []string{"p.yaml"}) {
		t.Errorf("ref %q chosen %v chain %q", r.Ref, r.Chosen, r.Chain)
	}
}

// Only the fields given override the policy; lists add to its lists.
func TestResolveOverridesOnlyWhatIsGiven(t *testing.T) {
	h := someoneElse(t)
	writeFile(t, filepath.Join(h.WorkDir, "p.yaml"), "limits:\n  memory: 300MiB\n  pids: 10\nfilesystem:\n  ro: [/a]\n")
	over := policy.Default()
	over.Pids, over.Memory, over.ReadOnly = 64, 5*policy.GiB, []string{"/b"}
	r, err := Resolve(Request{Command: []string{"srv"}, Policy: "./p.yaml", Overrides: over, Given: []string{"Pids", "ReadOnly"}, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if r.Policy.Memory != 300*policy.MiB || r.Policy.Pids != 64 || !slices.Equal(r.Policy.ReadOnly, []string{"/a", "/b"}) {
		t.Errorf("memory %v pids %d ro %q; want the file's memory, the given pids, both grants", r.Policy.Memory, r.Policy.Pids, r.Policy.ReadOnly)
	}
	if _, ok := r.Origin["Pids"]; ok || !r.Given["Pids"] {
		t.Errorf("origin %v given %v: pids is the caller's, not the file's", r.Origin, r.Given)
	}
	if _, err := Resolve(Request{Command: []string{"srv"}, Given: []string{"Memroy"}, Host: h}); err == nil {
		t.Error("a given field that does not exist was accepted")
	}
}

// Errors name what the caller gave in its own names: the reference as
// PolicyField, a file's key at FILE:LINE:COL, an override as its field.
func TestResolveErrorsNameTheSetting(t *testing.T) {
	h := someoneElse(t)
	writeFile(t, filepath.Join(h.WorkDir, "typo.yaml"), "limits:\n  memroy: 1GiB\n")
	name := func(f string) string { return "<" + f + ">" }
	over := policy.Default()
	over.NoFile = 3
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{Command: []string{"srv"}, Policy: "strict"}, `<Policy> strict: no built-in policy "strict"`},
		{Request{Command: []string{"srv"}, Policy: "./none.yaml"}, "<Policy> ./none.yaml: no such file ./none.yaml"},
		{Request{Command: []string{"srv"}, Policy: "typo.yaml"}, `typo.yaml:2:3: unknown key "memroy" in limits: did you mean memory?`},
		{Request{Command: []string{"srv"}, Overrides: over, Given: []string{"NoFile"}}, "<NoFile> 3: is too small"},
		{Request{}, "no server command"},
	} {
		c.req.Host = h
		_, err := Resolve(c.req)
		var fe field.Renderer
		if err == nil || !errors.As(err, &fe) || !strings.Contains(field.Message(err, name), c.want) {
			t.Errorf("Resolve(%+v) = %v; want a field error rendered as %q", c.req, err, c.want)
		}
	}
}

// Without a launch line (policy check) the policy resolves alone: what
// uses the unknown arguments is left out, ${STATE} is known, and no
// command is required.
func TestResolvePolicyOnly(t *testing.T) {
	h := someoneElse(t)
	writeFile(t, filepath.Join(h.WorkDir, "p.yaml"), "extends: npx\nfilesystem:\n  rw: [\"${ARG1}\", /x, \"${ARGS}\"]\nenv:\n  set:\n    WHERE: \"at ${ARG2}\"\n")
	r, err := Resolve(Request{PolicyOnly: true, Policy: "./p.yaml", Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Policy.ReadWrite, []string{"/x"}) || !slices.Contains(r.Policy.Env, "WHERE=at ") || len(r.Policy.Command) != 0 {
		t.Errorf("rw %q env %q command %q; want /x alone, the argument expanded to nothing, no command", r.Policy.ReadWrite, r.Policy.Env, r.Policy.Command)
	}
	if !strings.HasPrefix(r.StateDir(), filepath.Join(h.Home, "state")) {
		t.Errorf("state dir %q, want the host's", r.StateDir())
	}
	if _, err := Resolve(Request{Policy: "./p.yaml", Host: h}); err == nil || !strings.Contains(err.Error(), "no server command") {
		t.Errorf("no command and not PolicyOnly: %v, want no server command", err)
	}
}
