package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

// programPins pins what a writable grant lets the server change on the
// way to its program, following symlinks, and nothing a grant's own mount
// point or a read-only grant already keeps.
func TestProgramPins(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"proj/bin", "proj/lib/dist", "ro/bin"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"proj/lib/dist/index.js", "ro/bin/server", "proj/file"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../lib/dist/index.js", filepath.Join(dir, "proj/bin/server")); err != nil {
		t.Fatal(err)
	}
	p := func(rel string) string { return filepath.Join(dir, rel) }
	rw := func(rel string) initstage.Bind { return initstage.Bind{Path: p(rel), Writable: true} }
	ro := func(rel string) initstage.Bind { return initstage.Bind{Path: p(rel)} }
	for _, c := range []struct {
		name  string
		files []string
		binds []initstage.Bind
		want  []string
	}{
		{"a link in a writable grant, and what it leads to", []string{p("proj/bin/server")}, []initstage.Bind{rw("proj")},
			[]string{p("proj/bin"), p("proj/bin/server"), p("proj/lib"), p("proj/lib/dist"), p("proj/lib/dist/index.js")}},
		{"a read-only grant keeps it", []string{p("ro/bin/server")}, []initstage.Bind{ro("ro")}, nil},
		{"a read-only grant within a writable one", []string{p("ro/bin/server")}, []initstage.Bind{rw(""), ro("ro")},
			[]string{p("ro/bin"), p("ro/bin/server")}},
		{"a nested writable grant's mount point is one already", []string{p("proj/lib/dist/index.js")}, []initstage.Bind{rw("proj"), rw("proj/lib")},
			[]string{p("proj/lib/dist"), p("proj/lib/dist/index.js")}},
		{"a file granted writable by itself", []string{p("proj/file")}, []initstage.Bind{rw("proj/file")}, []string{p("proj/file")}},
		{"outside every grant", []string{"/usr/bin/env"}, []initstage.Bind{rw("proj")}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := programPins(c.files, c.binds)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("pins\n got %q\nwant %q", got, c.want)
			}
		})
	}
	loop := p("proj/loop")
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	if _, err := programPins([]string{loop}, []initstage.Bind{rw("proj")}); err == nil {
		t.Errorf("a symlink loop gave no error")
	}
}
