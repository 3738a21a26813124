package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

func socketAt(t testing.TB, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return path
}

// The search finds sockets in every grant, leaves a nested grant's part to
// that grant and a socket granted by itself alone, and follows no symlink.
func TestFindGrantSockets(t *testing.T) {
	top, nested, other := t.TempDir(), t.TempDir(), t.TempDir()
	inTop := socketAt(t, filepath.Join(top, "a", "b", "x.sock"))
	inNested := socketAt(t, filepath.Join(top, "n", "y.sock"))
	byItself := socketAt(t, filepath.Join(other, "wanted.sock"))
	outside := socketAt(t, filepath.Join(nested, "outside.sock"))
	if err := os.Symlink(nested, filepath.Join(top, "link")); err != nil {
		t.Fatal(err)
	}
	binds := []initstage.Bind{{Path: top, Writable: true}, {Path: filepath.Join(top, "n")}, {Path: byItself}}
	sortBinds(binds)
	got := findGrantSockets(binds)
	if want := []string{inTop, inNested}; !slices.Equal(slices.Sorted(slices.Values(got.Sockets)), slices.Sorted(slices.Values(want))) {
		t.Errorf("found %v, want %v (not %s through a symlink, not %s granted by itself)", got.Sockets, want, outside, byItself)
	}
	if got.Cut != "" {
		t.Errorf("cut: %s", got.Cut)
	}
}

// Past its entry limit the search stops and says where; later grants are
// named as not searched.
func TestFindGrantSocketsStopsAtItsLimit(t *testing.T) {
	big, later := t.TempDir(), t.TempDir()
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(big, "f"+string(rune('a'+i))), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	socketAt(t, filepath.Join(later, "missed.sock"))
	defer func(n int) { socketSearchLimit = n }(socketSearchLimit)
	socketSearchLimit = 10
	got := findGrantSockets([]initstage.Bind{{Path: big}, {Path: later}})
	if !strings.Contains(got.Cut, "stopped after 10 entries") || !strings.Contains(got.Cut, "not searched: "+later) {
		t.Errorf("cut %q, want the limit and %s named", got.Cut, later)
	}
	if slices.Contains(got.Sockets, filepath.Join(later, "missed.sock")) {
		t.Errorf("found %v past the limit", got.Sockets)
	}
}

// Directories deeper than socketSearchDepth are left out, and the cut says so.
func TestFindGrantSocketsDepth(t *testing.T) {
	top := t.TempDir()
	deep := top
	for range socketSearchDepth + 1 {
		deep = filepath.Join(deep, "d")
	}
	// Unix socket paths are short: make the deep one relative to its dir.
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(deep)
	l, err := net.Listen("unix", "deep.sock")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := findGrantSockets([]initstage.Bind{{Path: top}})
	if len(got.Sockets) != 0 || !strings.Contains(got.Cut, "levels below "+top) {
		t.Errorf("found %v, cut %q: want nothing found and the depth named", got.Sockets, got.Cut)
	}
}

// The search at every start, over 5000 cached files in 100 directories
// (BenchmarkSetIDSearch's tree): entries only, no stat.
func BenchmarkSocketSearch(b *testing.B) {
	dir := grantSearchTree(b)
	socketAt(b, filepath.Join(dir, "99", "s.sock"))
	binds := []initstage.Bind{{Path: dir, Writable: true}}
	for b.Loop() {
		if got := findGrantSockets(binds); len(got.Sockets) != 1 {
			b.Fatalf("found %v", got.Sockets)
		}
	}
}
