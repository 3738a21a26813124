package sandbox

import (
	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"

	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// What Describe lists is what Start mounts: a server that prints its
// mount table shows every mount Describe names, read-only or read-write
// as described.
func TestDescribeListsWhatStartMounts(t *testing.T) {
	requireConfinement(t)
	dir := t.TempDir()
	ro, rw := filepath.Join(dir, "ro"), filepath.Join(dir, "rw")
	prog := filepath.Join(dir, "bin", "mounts")
	for _, d := range []string{ro, rw, filepath.Dir(prog)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nexec cat /proc/self/mountinfo\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for d, mode := range map[string]os.FileMode{dir: 0o755, filepath.Dir(prog): 0o755, rw: 0o777} {
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
	}
	spec := sbxSpec(prog)
	spec.ReadOnly, spec.ReadWrite = []string{ro}, []string{rw}
	spec.Tmpfs = []string{"/opt/describe"}
	spec.StateDir = filepath.Join(dir, "state")

	d := Describe(spec)
	if len(d.Problems) > 0 {
		t.Fatalf("Describe: %v", d.Problems)
	}
	kinds := map[MountKind]int{}
	for _, m := range d.Mounts {
		kinds[m.Kind]++
	}
	if kinds[System] != len(rootMounts) || kinds[Grant] != 2 || kinds[State] != 1 || kinds[Program] != 1 || kinds[Tmpfs] != 1 {
		t.Fatalf("Describe lists %+v", d.Mounts)
	}

	out, stderr, ex := sbxRun(t, spec)
	if ex.Failed() {
		t.Fatalf("%v: %s", ex, stderr)
	}
	inside := map[string]string{} // mount point → ro or rw, the last mount there
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) > 5 {
			inside[f[4]] = strings.Split(f[5], ",")[0]
		}
	}
	for _, m := range d.Mounts {
		want := "ro"
		if m.Writable {
			want = "rw"
		}
		if got, ok := inside[m.Path]; !ok || got != want {
			t.Errorf("Describe lists %s %s (%v), inside it is %q (mounted: %v)", want, m.Path, m.Kind, got, ok)
		}
	}
}

// Describe says what Start would refuse, and still lists the rest.
func TestDescribeSaysWhatStartRefuses(t *testing.T) {
	dir := t.TempDir()
	spec := sbxSpec("no-such-program-for-describe")
	spec.ReadOnly, spec.ReadWrite = []string{dir}, []string{dir}
	d := Describe(spec)
	var msgs []string
	for _, err := range d.Problems {
		msgs = append(msgs, err.Error())
	}
	all := strings.Join(msgs, "\n")
	if !strings.Contains(all, `server command "no-such-program-for-describe"`) || !strings.Contains(all, dir+" is given both as ReadOnly and ReadWrite") {
		t.Errorf("Problems:\n%s\nwant the missing program and the grant given both ways", all)
	}
	if len(d.Mounts) != len(rootMounts) || d.Home != sandboxHome || d.Path != pathrule.ServerPATH {
		t.Errorf("Mounts %+v, HOME %s, PATH %s; want the sandbox's own", d.Mounts, d.Home, d.Path)
	}

	spec = sbxSpec("sh")
	spec.Env = []string{"PATH=/opt/bin", "MODE=fast"}
	spec.Dir = "/srv/describe"
	d = Describe(spec)
	if d.Path != "/opt/bin" || !slices.Equal(d.Env, []string{"PATH=/opt/bin", "HOME=" + sandboxHome, "LANG=" + sandboxLang, "MODE=fast"}) {
		t.Errorf("Env %q PATH %s: want the spec's PATH in place of the sandbox's, then its own", d.Env, d.Path)
	}
	if !d.WorkDirEmpty || d.WorkDir != "/srv/describe" {
		t.Errorf("working directory %s empty=%v: want /srv/describe, made empty", d.WorkDir, d.WorkDirEmpty)
	}
}

// A grant the server's user could not use is among what Describe says
// Start refuses, in Start's words, and CheckGrants says the same: for
// root, another user's directory that user may not enter; for an ordinary
// user, their own (the server is them).
func TestDescribeSaysWhichGrantTheServerCouldNotUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "closed")
	if err := os.Mkdir(dir, 0o000); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, 4242, 4242); err != nil {
			t.Fatal(err)
		}
	}
	spec := sbxSpec("sh")
	spec.ReadOnly = []string{dir}
	err := CheckGrants(spec)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "may not read it") {
		t.Fatalf("CheckGrants: %v, want %s refused as unreadable", err, dir)
	}
	if d := Describe(spec); !slices.ContainsFunc(d.Problems, func(p error) bool { return p.Error() == err.Error() }) {
		t.Errorf("Describe's problems %v lack %v", d.Problems, err)
	}
	open := t.TempDir()
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	spec.ReadOnly = []string{open}
	if err := CheckGrants(spec); err != nil {
		t.Errorf("CheckGrants of a directory anyone may read: %v", err)
	}
}
