package diagnose

import (
	"io/fs"
	"path"
	"strings"
	"testing"
	"time"
)

// fakeFS is a made-up host: directories, files and symbolic links by
// absolute path, with their modes. Parents are made as they are named.
type fakeFS struct {
	nodes map[string]fakeNode
}

type fakeNode struct {
	mode fs.FileMode // with fs.ModeDir or fs.ModeSymlink
	link string      // a symbolic link's target
}

func newFS() *fakeFS { return &fakeFS{nodes: map[string]fakeNode{"/": {mode: fs.ModeDir | 0o755}}} }

func (f *fakeFS) parents(p string) {
	for d := path.Dir(p); d != "/"; d = path.Dir(d) {
		if _, ok := f.nodes[d]; !ok {
			f.nodes[d] = fakeNode{mode: fs.ModeDir | 0o755}
		}
	}
}

func (f *fakeFS) dir(p string, perm fs.FileMode) *fakeFS {
	f.parents(p)
	f.nodes[p] = fakeNode{mode: fs.ModeDir | perm}
	return f
}

func (f *fakeFS) file(p string, perm fs.FileMode) *fakeFS {
	f.parents(p)
	f.nodes[p] = fakeNode{mode: perm}
	return f
}

func (f *fakeFS) symlink(p, target string) *fakeFS {
	f.parents(p)
	f.nodes[p] = fakeNode{mode: fs.ModeSymlink | 0o777, link: target}
	return f
}

// EvalSymlinks resolves every link in p, as filepath.EvalSymlinks does.
func (f *fakeFS) EvalSymlinks(p string) (string, error) {
	resolved := "/"
	rest := strings.Split(strings.Trim(path.Clean(p), "/"), "/")
	for hops := 0; len(rest) > 0; {
		part := rest[0]
		rest = rest[1:]
		if part == "" {
			continue
		}
		next := path.Join(resolved, part)
		n, ok := f.nodes[next]
		switch {
		case !ok:
			return "", &fs.PathError{Op: "lstat", Path: next, Err: fs.ErrNotExist}
		case n.mode&fs.ModeSymlink != 0:
			if hops++; hops > 40 {
				return "", &fs.PathError{Op: "lstat", Path: next, Err: fs.ErrInvalid}
			}
			target := n.link
			if !path.IsAbs(target) {
				target = path.Join(resolved, target)
			}
			resolved = "/"
			rest = append(strings.Split(strings.Trim(path.Clean(target), "/"), "/"), rest...)
		default:
			resolved = next
		}
	}
	return resolved, nil
}

func (f *fakeFS) Stat(p string) (fs.FileInfo, error) {
	real, err := f.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	return fakeInfo{name: path.Base(real), mode: f.nodes[real].mode}, nil
}

type fakeInfo struct {
	name string
	mode fs.FileMode
}

func (i fakeInfo) Name() string       { return i.name }
func (i fakeInfo) Size() int64        { return 0 }
func (i fakeInfo) Mode() fs.FileMode  { return i.mode }
func (i fakeInfo) ModTime() time.Time { return time.Time{} }
func (i fakeInfo) IsDir() bool        { return i.mode.IsDir() }
func (i fakeInfo) Sys() any           { return nil }

// The fake resolves links as the host does: relative and absolute, in
// the middle of a path, and fails on what is missing.
func TestFakeFSResolvesLinks(t *testing.T) {
	f := newFS().file("/srv/a/f", 0o644).symlink("/srv/l", "a").symlink("/opt/abs", "/srv/l/f").symlink("/srv/dead", "nothere")
	for in, want := range map[string]string{"/srv/l/f": "/srv/a/f", "/opt/abs": "/srv/a/f", "/srv/a": "/srv/a"} {
		if got, err := f.EvalSymlinks(in); got != want || err != nil {
			t.Errorf("EvalSymlinks(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := f.EvalSymlinks("/srv/dead"); err == nil {
		t.Error("a dangling link resolved")
	}
	if fi, err := f.Stat("/srv/l"); err != nil || !fi.IsDir() {
		t.Errorf("Stat through a link: %v %v", fi, err)
	}
}
