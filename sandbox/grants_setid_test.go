package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// setIDTree makes dir/bin/prog with mode (set-ID bits included) owned by
// the test owner when root, as a user's own set-ID program would be.
func setIDTree(t *testing.T, mode os.FileMode) (dir, prog string) {
	t.Helper()
	dir = testenv.SharedDir(t, "mcpsandbox-setid-")
	prog = filepath.Join(dir, "bin", "prog")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Dir(prog), 0o755))
	must(os.WriteFile(prog, []byte("#!/bin/false\n"), 0o755))
	if os.Geteuid() == 0 {
		must(os.Chown(prog, idmapOwnerUID, idmapOwnerGID))
	}
	must(os.Chmod(prog, mode))
	if os.Geteuid() == 0 {
		must(os.Chown(filepath.Dir(prog), idmapOwnerUID, idmapOwnerGID))
		must(os.Chown(dir, idmapOwnerUID, idmapOwnerGID))
	}
	return dir, prog
}

func TestReadWriteGrantHoldingASetIDProgramIsRefused(t *testing.T) {
	for _, mode := range []os.FileMode{0o755 | os.ModeSetuid, 0o755 | os.ModeSetgid, 0o644 | os.ModeSetuid} {
		t.Run(fmt.Sprintf("%o", mode&os.ModePerm|modeBits(mode)), func(t *testing.T) {
			dir, prog := setIDTree(t, mode)
			for _, grant := range []string{dir, prog} {
				spec := sbxSpec("/bin/true")
				spec.ReadWrite = []string{grant}
				p, err := Start(spec, sbxLogger(t))
				if err == nil {
					p.Close()
					t.Fatalf("a --rw grant (%s) holding %s started a server", grant, prog)
				}
				var fe *field.Error
				if !errors.As(err, &fe) || fe.Field != "ReadWrite" || fe.Value != grant || !strings.Contains(err.Error(), prog) || !strings.Contains(fe.Fix, "{ReadOnly}") {
					t.Fatalf("refused with %v; want a ReadWrite error naming %s and the fix", err, prog)
				}
				t.Logf("refused: %v", err)
			}
			if fi, err := os.Stat(prog); err != nil || fi.Mode() != mode {
				t.Errorf("the program changed: %v %v", fi.Mode(), err)
			}
		})
	}
}

func modeBits(m os.FileMode) os.FileMode {
	var b os.FileMode
	if m&os.ModeSetuid != 0 {
		b |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		b |= 0o2000
	}
	return b
}

// What is not a set-ID program stays grantable: a set-group-ID directory (a
// shared group's), links to set-ID programs elsewhere, and one covered by a
// nested read-only grant, which the server then cannot open for writing.
func TestReadWriteGrantsWithoutWritableSetIDProgramsStart(t *testing.T) {
	requireConfinement(t)
	dir, prog := setIDTree(t, 0o755|os.ModeSetuid)
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o2777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o2777)
	if os.Geteuid() == 0 {
		os.Chown(shared, idmapOwnerUID, idmapOwnerGID)
	}
	if err := os.Symlink("/usr/bin/passwd", filepath.Join(dir, "passwd")); err != nil {
		t.Fatal(err)
	}
	spec := sbxSpec()
	spec.ReadWrite = []string{dir}
	spec.ReadOnly = []string{filepath.Dir(prog)}
	out := sbxShell(t, spec, fmt.Sprintf(`(: >> %s) 2>&1 && echo WRITABLE; touch %s/new && echo shared-ok`, prog, shared))
	if !strings.Contains(out, "Read-only file system") || !strings.Contains(out, "shared-ok") {
		t.Errorf("inside: %q; want the covered program unwritable and the rest of the grant writable", out)
	}
}

func TestSetIDSearchHasALimit(t *testing.T) {
	dir, _ := setIDTree(t, 0o755)
	for i := range 20 {
		os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o644)
	}
	saved := setIDSearchLimit
	setIDSearchLimit = 10
	t.Cleanup(func() { setIDSearchLimit = saved })
	spec := sbxSpec("/bin/true")
	spec.ReadWrite = []string{dir}
	_, err := newInitConfig(spec)
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "ReadWrite" || !strings.Contains(err.Error(), "more than 10 entries") {
		t.Fatalf("a grant past the search limit: %v; want a ReadWrite error saying so", err)
	}
	t.Log(err)
}

// BenchmarkSetIDSearch searches a grant of 5000 files in 100 directories,
// a set-ID one among them (what a start costs on top, when cached).
func BenchmarkSetIDSearch(b *testing.B) {
	dir := grantSearchTree(b)
	os.Chmod(filepath.Join(dir, "99", "49"), os.ModeSetuid|0o755)
	binds, err := resolveBinds(nil, []string{dir})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := checkSetIDInGrants(binds); err == nil {
			b.Fatal("the set-ID file was not found")
		}
	}
}

// grantSearchTree makes the grant the search benchmarks walk: 5000 empty
// files, named 0 to 49, in 100 directories named 0 to 99.
func grantSearchTree(b *testing.B) string {
	dir := b.TempDir()
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprint(d))
		os.Mkdir(sub, 0o755)
		for f := range 50 {
			os.WriteFile(filepath.Join(sub, fmt.Sprint(f)), nil, 0o644)
		}
	}
	return dir
}
