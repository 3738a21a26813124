package resolve

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

func executable(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "#!/bin/sh\n")
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func rw(paths ...string) (policy.Policy, []string) {
	p := policy.Default()
	p.ReadWrite = paths
	return p, []string{"ReadWrite"}
}

// A user's grant that holds an automatic one wins: `--rw ~/proj --
// ~/proj/bin/server` grants ~/proj read-write, and the program's
// directory is not granted read-only beside it (which the sandbox refuses
// as given both ways), nor is the project above bin/ taken for an
// installation.
func TestUsersGrantWinsOverTheProgramsDirectory(t *testing.T) {
	h := someoneElse(t)
	proj := filepath.Join(h.WorkDir, "proj")
	server := filepath.Join(proj, "bin", "server")
	executable(t, server)

	r, err := Resolve(Request{Command: []string{server}, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(proj, "bin")}; !slices.Equal(r.Policy.ReadOnly, want) {
		t.Errorf("no grant given: ro %q, want the program's directory %q", r.Policy.ReadOnly, want)
	}

	over, given := rw(proj)
	r, err = Resolve(Request{Command: []string{server}, Overrides: over, Given: given, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Policy.ReadOnly) != 0 || !slices.Equal(r.Policy.ReadWrite, []string{proj}) {
		t.Fatalf("--rw %s: ro %q rw %q; want the project read-write alone", proj, r.Policy.ReadOnly, r.Policy.ReadWrite)
	}
	g := r.Grants[0]
	if len(r.Grants) != 1 || g.Automatic() || len(g.Covers) != 1 || g.Covers[0].Path != filepath.Join(proj, "bin") || g.Covers[0].From[0] != (Source{Launch, "the program's directory"}) {
		t.Errorf("grants %+v; want --rw covering the program's directory", r.Grants)
	}
}

// The same for a built-in's grant: node's ${PROJECT} read-only yields to
// the user's --rw of the project.
func TestUsersGrantWinsOverABuiltinsGrant(t *testing.T) {
	h := someoneElse(t)
	if _, err := os.Stat("/usr/bin/node"); err != nil {
		t.Skip("no /usr/bin/node")
	}
	proj := filepath.Join(h.WorkDir, "app")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(proj, "package.json"), `{"name": "app"}`)
	writeFile(t, filepath.Join(proj, "index.js"), "")
	over, given := rw(proj)
	r, err := Resolve(Request{Command: []string{"node", filepath.Join(proj, "index.js")}, Overrides: over, Given: given, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if r.Ref != "node" || slices.Contains(r.Policy.ReadOnly, proj) || !slices.Equal(r.Policy.ReadWrite, []string{proj}) {
		t.Fatalf("policy %s: ro %q rw %q; want node's ${PROJECT} left to --rw", r.Ref, r.Policy.ReadOnly, r.Policy.ReadWrite)
	}
	if c := r.Grants[len(r.Grants)-1].Covers; len(c) != 1 || c[0].From[0] != (Source{Builtin, "built-in node"}) {
		t.Errorf("grants %+v; want --rw covering built-in node's", r.Grants)
	}

	// So too through a file of the user's that extends the built-in; the
	// file's own grant is the user's and stays.
	writeFile(t, filepath.Join(h.WorkDir, "mine.yaml"), "extends: node\nfilesystem:\n  ro: [/opt/data]\n")
	r, err = Resolve(Request{Command: []string{"node", filepath.Join(proj, "index.js")}, Policy: "mine.yaml", Overrides: over, Given: given, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Policy.ReadOnly, []string{"/opt/data"}) || !slices.Equal(r.Policy.ReadWrite, []string{proj}) {
		t.Errorf("extends node: ro %q rw %q; want the file's /opt/data, and node's ${PROJECT} left to --rw", r.Policy.ReadOnly, r.Policy.ReadWrite)
	}
}

// Only automatic grants yield: a user's own file and flag asking both
// ways are the user's to settle (the sandbox refuses it, naming both),
// and an automatic grant that nothing of the user's holds stays.
func TestUsersGrantsDoNotYieldToEachOther(t *testing.T) {
	h := someoneElse(t)
	proj := filepath.Join(h.WorkDir, "proj")
	server := filepath.Join(proj, "bin", "server")
	executable(t, server)
	other := filepath.Join(h.WorkDir, "other")
	writeFile(t, filepath.Join(h.WorkDir, "p.yaml"), "filesystem:\n  ro: [\""+other+"\"]\n")
	over, given := rw(other)
	r, err := Resolve(Request{Command: []string{server}, Policy: "./p.yaml", Overrides: over, Given: given, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{other, filepath.Join(proj, "bin")}; !slices.Equal(r.Policy.ReadOnly, want) || !slices.Equal(r.Policy.ReadWrite, []string{other}) {
		t.Errorf("ro %q rw %q; want the file's and the program's directory read-only, the flag's read-write", r.Policy.ReadOnly, r.Policy.ReadWrite)
	}
}
