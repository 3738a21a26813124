package pathrule

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		path, dir string
		want      bool
	}{
		{"/usr", "/usr", true},
		{"/usr/bin/node", "/usr", true},
		{"/usr/bin/node", "/usr/", true}, // a trailing / does not matter
		{"/usr/", "/usr", true},
		{"/usr//bin", "/usr", true},
		{"/usr/./bin", "/usr", true},
		{"/usrlocal/bin", "/usr", false},
		{"/a/bc", "/a/b", false},
		{"/a/b", "/a/bc", false},
		{"/us", "/usr", false},
		{"/", "/usr", false},
		{"/usr/../etc/passwd", "/usr", false}, // cleaned: /etc/passwd
		{"/home/a", "/", true},
		{"/", "/", true},
		{"/", "//", true},
		{"/srv\x00/x", "/srv", false}, // bytes, not C strings
		{"/srv/a\x00b", "/srv", true},
		{"relative", "/", false},
		{"relative", "relative", true},
		{"relative/x", "relative", false},
		{"/x", "", false},
		{"", "", true},
	} {
		if got := Within(tc.path, tc.dir); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.path, tc.dir, got, tc.want)
		}
	}
}

// FuzzWithin checks the rule's properties on any two paths.
func FuzzWithin(f *testing.F) {
	for _, s := range [][2]string{{"/usr/bin", "/usr"}, {"/usr/bin", "/usr/"}, {"/a/bc", "/a/b"}, {"/x", "/"}, {"x", "/"}, {"/a/../b", "/b"}, {"", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, path, dir string) {
		got := Within(path, dir)
		cp, cd := filepath.Clean(path), filepath.Clean(dir)
		if !Within(path, path) || !Within(dir, dir) {
			t.Fatalf("a path is not within itself: %q or %q", path, dir)
		}
		// Trailing slashes and uncleaned spellings change nothing.
		if Within(cp+"/", cd+"/") != got || Within(cp, cd) != got {
			t.Fatalf("Within(%q, %q) = %v, but not for their clean forms", path, dir, got)
		}
		want := cp == cd
		if filepath.IsAbs(cp) && filepath.IsAbs(cd) {
			want = want || cd == "/" || strings.HasPrefix(cp, cd+"/")
		}
		if got != want {
			t.Fatalf("Within(%q, %q) = %v, want %v", path, dir, got, want)
		}
		// Containment is antisymmetric and transitive through the parent.
		if got && Within(dir, path) && cp != cd {
			t.Fatalf("%q and %q are within each other", path, dir)
		}
		if got && cp != cd && !Within(filepath.Dir(cp), cd) {
			t.Fatalf("%q is within %q, its parent %q is not", path, dir, filepath.Dir(cp))
		}
	})
}
