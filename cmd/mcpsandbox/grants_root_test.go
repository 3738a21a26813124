package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// rootDir is a root-owned directory of mode under the test's temporary
// directory, holding name (root's, 0600) with content.
func rootDir(t *testing.T, mode os.FileMode, name, content string) string {
	t.Helper()
	dir := testenv.SharedDir(t, "mcpsandbox-rootgrant-")
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, name, content)
	if err := os.Chmod(filepath.Join(dir, name), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// `sudo mcpsandbox run -- npx -y @modelcontextprotocol/server-filesystem
// /srv/notes`, /srv/notes root's: the server (the pinned package, through
// the Go SDK) reads and writes there, what it writes is root's on the
// host, a --ro root-only directory is read but not written, and root's
// 0600 file in a world-readable --ro directory (which needs no lending)
// stays closed to it.
func TestRootGrantsRootsDirectoryToServerFilesystem(t *testing.T) {
	requireConfinement(t)
	if os.Geteuid() != 0 {
		t.Skip("lending root's directories is for mcpsandbox run as root")
	}
	entry := testenv.NPMServer(t, "server-filesystem")
	notes := rootDir(t, 0o755, "note.txt", "root's note")
	private := rootDir(t, 0o700, "plan.txt", "root's plan")
	public := rootDir(t, 0o755, "secret.txt", "root's secret")
	b := newStateBase(t)
	s := b.mustStart(t, "--ro", private, "--ro", public, "--", "node", entry, notes, private, public)
	defer s.stop()

	if got := s.mustCall(t, "read_text_file", map[string]any{"path": filepath.Join(notes, "note.txt")}); got != "root's note" {
		t.Errorf("read_text_file in the --rw grant answered %q", got)
	}
	written := filepath.Join(notes, "new.txt")
	// write_file waits for a person under the built-in filesystem's tier.
	if got, failed := s.callApproved(t, "write_file", map[string]any{"path": written, "content": "from the server"}, nil); failed {
		t.Fatalf("write_file, approved: %s", got)
	}
	if got := s.mustCall(t, "read_text_file", map[string]any{"path": written}); got != "from the server" {
		t.Errorf("read_text_file of what it wrote answered %q", got)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(written, &st); err != nil {
		t.Fatalf("write_file left nothing on the host: %v", err)
	}
	if st.Uid != 0 || st.Gid != 0 || st.Mode&(syscall.S_ISUID|syscall.S_ISGID) != 0 {
		t.Errorf("on the host new.txt is %d:%d mode %o; want root's, without set-ID bits", st.Uid, st.Gid, st.Mode&0o7777)
	}

	if got := s.mustCall(t, "read_text_file", map[string]any{"path": filepath.Join(private, "plan.txt")}); got != "root's plan" {
		t.Errorf("read_text_file in the root-only --ro grant answered %q", got)
	}
	if text, failed := s.callApproved(t, "write_file", map[string]any{"path": filepath.Join(private, "new.txt"), "content": "x"}, nil); !failed || !strings.Contains(text, "read-only file system") {
		t.Errorf("write_file in the --ro grant: %q (failed %v); want EROFS", text, failed)
	}
	if _, err := os.Lstat(filepath.Join(private, "new.txt")); err == nil {
		t.Error("a file appeared in the --ro grant on the host")
	}
	if text, failed := s.call(t, "read_text_file", map[string]any{"path": filepath.Join(public, "secret.txt")}); !failed || strings.Contains(text, "root's secret") || !strings.Contains(text, "permission denied") {
		t.Errorf("read_text_file of root's 0600 file in a world-readable --ro grant: %q (failed %v); want EACCES", text, failed)
	}
}

// policy explain says which grants lend root's ownership, and, where the
// seccomp filter would let set-ID modes through, that the start would
// fail and why.
func TestExplainSaysRootsDirectoryIsLent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("lending root's directories is for mcpsandbox run as root")
	}
	entry := testenv.NPMServer(t, "server-filesystem")
	notes := rootDir(t, 0o755, "note.txt", "root's note")
	private := rootDir(t, 0o700, "plan.txt", "root's plan")
	public := rootDir(t, 0o755, "secret.txt", "root's secret")
	args := []string{"--ro", private, "--ro", public, "--", "node", entry, notes, private, public}
	e := explain(t, args...)
	const lent = "root's, lent to the server (idmapped): root is shown as its uid, and what it writes lands as root's (group 0)"
	for kind, path := range map[string]string{"rw": notes, "ro": private} {
		if why, ok := e.grantedAs(kind, path); !ok || !strings.HasSuffix(why, lent) {
			t.Errorf("explain does not say %s %s is lent:\n%s", kind, path, e.text("Mounts"))
		}
	}
	if why, _ := e.grantedAs("ro", public); strings.Contains(why, "lent") {
		t.Errorf("explain says the world-readable %s is lent: %s", public, why)
	}
	if len(e["Start"]) != 0 {
		t.Errorf("explain says the start would fail:\n%s", e.text("Start"))
	}

	e = explain(t, append([]string{"--seccomp-log"}, args...)...)
	start := e.text("Start")
	// The first grant refused is named (the order of the temporary names).
	if !strings.Contains(start, "--rw "+notes+": is owned by 0:0 with mode 755") && !strings.Contains(start, "--ro "+private+": is owned by 0:0 with mode 700") {
		t.Errorf("explain --seccomp-log: Start names neither root-only grant:\n%s", start)
	}
	for _, want := range []string{"the start would fail", "its dynamic uid", "default seccomp profile", "without --seccomp-log"} {
		if !strings.Contains(start, want) {
			t.Errorf("explain --seccomp-log: Start lacks %q:\n%s", want, start)
		}
	}
}
