package diagnose

import (
	"io/fs"
	"strings"
	"testing"
)

// noHost is a host the diagnosis must not look at: every look fails the
// test.
type noHost struct{ t *testing.T }

func (h noHost) Stat(p string) (fs.FileInfo, error) {
	h.t.Errorf("a tool error's diagnosis looked at the host: stat %s", p)
	return nil, fs.ErrNotExist
}

func (h noHost) EvalSymlinks(p string) (string, error) {
	h.t.Errorf("a tool error's diagnosis looked at the host: readlink %s", p)
	return "", fs.ErrNotExist
}

// A tool error is the server's text: it may quote any path. What it gets
// from mcpsandbox is decided from the policy alone, never by looking at
// the host, so it is the same whether the file exists or not, and never
// says that it exists; a path outside what the user's configuration names
// gets nothing, and so does a place no policy should grant.
func TestToolErrorIsNoOracle(t *testing.T) {
	f := Facts{Command: []string{"node", "/srv/notes-server/index.js", "/srv/notes"}, ReadOnly: []string{"/srv/notes-server", "/data/ro"},
		Root: true, Own: []string{"/home/ann/.local/state/mcpsandbox"}, FS: noHost{t}}
	for _, text := range []string{
		"Error: EACCES: permission denied, open '/root/secret/key'",
		"Error: ENOENT: no such file or directory, open '/root/secret/key'",
		"PermissionError: [Errno 13] Permission denied: '/home/ann/.ssh/id_ed25519'",
		"Error: ENOENT: no such file or directory, open '/srv/notes/../../etc/shadow'",
		"Error: EACCES: permission denied, open '/proc/1/environ'",
		"Error: AWS_SECRET_ACCESS_KEY environment variable is not set: EACCES",
		"npm error request to https://registry.npmjs.org/x failed [Errno 2]",
	} {
		if d, ok := ToolError(toolErrorQuoting(text), f); ok {
			t.Errorf("%q: diagnosed %q", text, render(d))
		}
	}
	// Under a path the command names, not granted: the same words for
	// any file in it, existing or not, and only the grant of that path.
	a, okA := ToolError(toolErrorQuoting("Error: EACCES: permission denied, open '/srv/notes/a.md'"), f)
	b, okB := ToolError(toolErrorQuoting("Error: EACCES: permission denied, open '/srv/notes/b.md'"), f)
	if !okA || !okB || strings.ReplaceAll(render(a), "a.md", "b.md") != render(b) {
		t.Errorf("two files under /srv/notes: %q and %q, want the same words", render(a), render(b))
	}
	for _, want := range []string{"could not open /srv/notes/a.md: it lies in /srv/notes, which the command line names but the policy does not grant", "grant it with ReadOnly /srv/notes"} {
		if !strings.Contains(render(a), want) {
			t.Errorf("%q does not say %q", render(a), want)
		}
	}
	if strings.Contains(render(a), "exist") {
		t.Errorf("%q speaks of existence", render(a))
	}
	// The command naming a system directory or the user's home does not
	// let a hint name what no policy should grant.
	f.Command = []string{"node", "/srv/s.js", "/etc", "/home/ann"}
	for _, p := range []string{"/etc/shadow", "/home/ann/.local/state/mcpsandbox/other/npm/x.js"} {
		if d, ok := ToolError(toolErrorQuoting("Error: ENOENT: no such file or directory, open '"+p+"'"), f); ok {
			t.Errorf("%s: diagnosed %q", p, render(d))
		}
	}
	// In a grant: a write to a read-only one is explained; a permission
	// error as root names the grant, not the host's modes.
	if d, ok := ToolError(toolErrorQuoting("OSError: [Errno 30] Read-only file system: '/data/ro/x/out.txt'"), f); !ok || !strings.Contains(render(d), "lies in /data/ro, granted read-only") {
		t.Errorf("EROFS in a read-only grant: %q", render(d))
	}
	d, ok := ToolError(toolErrorQuoting("PermissionError: [Errno 13] Permission denied: '/data/ro/x/secret'"), f)
	if !ok || !strings.Contains(render(d), "it lies in /data/ro, which is granted, but the server runs as an unprivileged user of its own") || strings.Contains(render(d), "mode") {
		t.Errorf("EACCES in a grant: %q", render(d))
	}
	if d, ok := ToolError(toolErrorQuoting("Error: ENOENT: no such file or directory, open '/data/ro/x/gone'"), f); ok {
		t.Errorf("ENOENT in a grant: %q", render(d))
	}
}
