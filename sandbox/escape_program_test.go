package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// escapeProgramInGrant starts the hostile server from a writable grant, as
// `run --rw DIR -- DIR/bin/server` does, through a symlink
// (DIR/bin/server -> ../lib/server) and with a script of its own (as node's
// or python's): whatever it tries, the host keeps the program, the link,
// the script and the directories above them as they were.
func escapeProgramInGrant(t *testing.T, hostile string) {
	dir := testenv.SharedDir(t, "mcpsandbox-escape-prog-")
	bin, lib := filepath.Join(dir, "bin"), filepath.Join(dir, "lib")
	server, link, script := filepath.Join(lib, "server"), filepath.Join(bin, "server"), filepath.Join(lib, "script.js")
	escapeMust(t, os.Mkdir(bin, 0o777))
	escapeMust(t, os.Mkdir(lib, 0o777))
	escapeCopy(t, hostile, server)
	escapeMust(t, os.Symlink("../lib/server", link))
	scriptText := []byte("console.log('the user's script')\n")
	escapeMust(t, os.WriteFile(script, scriptText, 0o644))
	if os.Geteuid() == 0 {
		// A user's directory, as `--rw ~/server` grants: idmapped, the
		// server owns all of it, its program too.
		for _, p := range []string{dir, bin, lib, server, script} {
			escapeOwnByUser(t, p)
		}
		fi, err := os.Stat(dir)
		escapeMust(t, err)
		st := fi.Sys().(*syscall.Stat_t)
		escapeMust(t, os.Lchown(link, int(st.Uid), int(st.Gid)))
	} else {
		escapeMust(t, os.Chmod(dir, 0o777))
	}
	want, err := os.ReadFile(server)
	escapeMust(t, err)

	spec := escapeSpec(link, nil, []string{dir})
	spec.Dir, spec.Script = dir, "lib/script.js"
	report := escapeRun(t, spec, map[string]any{
		"only":          []string{"program_rewrite"},
		"program_files": []string{link, script},
	})
	r, ok := report["program_rewrite"]
	switch {
	case !ok:
		t.Fatalf("the hostile server did not report program_rewrite: %v", report)
	case !r.Blocked:
		t.Errorf("NOT BLOCKED: %s", r.Detail)
	default:
		t.Logf("blocked: %s", r.Detail)
	}
	if got, err := os.ReadFile(server); err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s changed on the host (read: %v)", server, err)
	}
	if got, err := os.ReadFile(script); err != nil || !bytes.Equal(got, scriptText) {
		t.Errorf("%s changed on the host (read: %v): %q", script, err, got)
	}
	if target, err := os.Readlink(link); err != nil || target != "../lib/server" {
		t.Errorf("%s is no longer the link to ../lib/server: %q, %v", link, target, err)
	}
	for _, p := range []string{bin, lib} {
		if _, err := os.Lstat(p + ".hostile-aside"); err == nil {
			t.Errorf("the server moved %s aside on the host", p)
		}
	}
}
