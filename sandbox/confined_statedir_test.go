package sandbox

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"golang.org/x/sys/unix"
)

// Spec.StateDir: made on the first start, owned by the server's uid, 0700,
// and the same server finds what it wrote there on the next start.
func TestConfinedStateDirKeepsTheServersFiles(t *testing.T) {
	requireConfinement(t)
	state := filepath.Join(t.TempDir(), "lib", "app", "state") // lib and app do not exist yet
	spec := sbxSpec()
	spec.StateDir = state
	script := fmt.Sprintf(`set -e
cd %[1]s
echo "uid $(id -u)"
if [ -f notes ]; then echo "found $(cat notes)"; fi
echo "run from $(id -u)" > notes
`, state)
	out1 := sbxShell(t, spec, script)
	out2 := sbxShell(t, spec, script)
	var uid1, uid2 string
	fmt.Sscanf(out1, "uid %s", &uid1)
	fmt.Sscanf(out2, "uid %s", &uid2)
	if uid1 == "" || uid1 != uid2 {
		t.Fatalf("the server ran as %q, then as %q; want the same uid each time\n%s\n%s", uid1, uid2, out1, out2)
	}
	if strings.Contains(out1, "found") {
		t.Errorf("the first run found a file in a new state dir:\n%s", out1)
	}
	if !strings.Contains(out2, "found run from "+uid1) {
		t.Errorf("the second run did not find the first run's file:\n%s", out2)
	}
	var st unix.Stat_t
	if err := unix.Lstat(state, &st); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(st.Uid) != uid1 || st.Mode&0o7777 != 0o700 {
		t.Errorf("on the host the state dir is owned by %d mode %o; want the server's uid %s, 0700", st.Uid, st.Mode&0o7777, uid1)
	}
	if err := unix.Lstat(filepath.Dir(state), &st); err != nil || st.Uid != uint32(os.Geteuid()) || st.Mode&0o7777 != 0o755 {
		t.Errorf("its parent made on the way is owned by %d mode %o (%v); want the caller's, 0755", st.Uid, st.Mode&0o7777, err)
	}
	// A set-ID file there is refused like one in any read-write grant.
	suid := filepath.Join(state, "suid")
	if err := os.WriteFile(suid, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(suid, int(st.Uid), int(st.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(suid, os.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	spec.Args = []string{"/bin/sh", "-c", script} // the same server
	_, err := Start(spec, sbxLogger(t))
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "StateDir" || !strings.Contains(err.Error(), "set-user-ID") {
		t.Errorf("Start with a setuid file in the state dir: %v; want a StateDir set-ID refusal", err)
	}
}

// A directory of someone else's is refused, never taken over.
func TestConfinedStateDirOfSomeoneElseIsRefused(t *testing.T) {
	requireConfinement(t)
	dir := filepath.Join(t.TempDir(), "theirs")
	if os.Geteuid() == 0 {
		if err := os.Mkdir(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, idmapOwnerUID, idmapOwnerGID); err != nil {
			t.Fatal(err)
		}
	} else {
		dir = "/usr/share" // root's, and not this user's to change anyway
	}
	var before unix.Stat_t
	if err := unix.Lstat(dir, &before); err != nil {
		t.Fatal(err)
	}
	spec := sbxSpec("/bin/true")
	spec.StateDir = dir
	_, err := Start(spec, sbxLogger(t))
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "StateDir" || fe.Value != dir {
		t.Fatalf("Start with another user's state dir: %v; want a StateDir error", err)
	}
	for _, want := range []string{fmt.Sprintf("owned by uid %d", before.Uid), "never taken over", "chown -R", "new directory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	var after unix.Stat_t
	if err := unix.Lstat(dir, &after); err != nil || after.Uid != before.Uid || after.Mode != before.Mode {
		t.Errorf("the refused dir changed: %+v (%v), was owned by %d mode %o", after, err, before.Uid, before.Mode)
	}
}

// As root, an empty directory of root's (made for the server) is given to
// the server; one with files in it is not.
func TestConfinedStateDirOfRootIsTakenOnlyEmpty(t *testing.T) {
	requireConfinement(t)
	if os.Geteuid() != 0 {
		t.Skip("unprivileged, a state dir is the caller's own: nothing is taken over")
	}
	dir := filepath.Join(t.TempDir(), "made-by-admin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := sbxSpec()
	spec.StateDir = dir
	spec.Args = []string{"/bin/true"}
	_, err := Start(spec, sbxLogger(t))
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("Start with a non-empty root-owned state dir: %v; want a refusal", err)
	}
	if owner := idmapOwner(t, dir); owner != "0:0" {
		t.Errorf("the refused dir is now owned by %s", owner)
	}
	os.Remove(filepath.Join(dir, "secret"))
	out := sbxShell(t, spec, "id -u; touch "+dir+"/mine")
	if owner := idmapOwner(t, dir); owner != strings.TrimSpace(out)+":"+strings.TrimSpace(out) {
		t.Errorf("the empty root-owned state dir is owned by %s; want the server's %s", owner, out)
	}
}

func TestStateDirPathsAreChecked(t *testing.T) {
	grant := t.TempDir()
	for _, c := range []struct{ path, want string }{
		{"var/lib/x", "absolute"},
		{"/", "host root"},
		{"/proc/1", "/proc"},
		{"/sys/x", "/sys"},
		{grant, "granted as ReadOnly too"},
	} {
		spec := sbxSpec("/bin/true")
		spec.ReadOnly = []string{grant}
		spec.StateDir = c.path
		_, err := newInitConfig(spec)
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Field != "StateDir" || fe.Fix == "" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("StateDir %s: %v; want a StateDir error with a fix saying %q", c.path, err, c.want)
		}
	}
}

// The state dir counts apart from the ReadWrite grants (the same path
// granted --rw is another server), and an identity without one is encoded
// as before it existed, so that servers keep their uids.
func TestIdentityCountsTheStateDirApart(t *testing.T) {
	withState, withRW := sbxSpec("/bin/true"), sbxSpec("/bin/true")
	withState.StateDir = "/var/lib/app"
	withRW.ReadWrite = []string{"/var/lib/app"}
	if identityOf(t, withState) == identityOf(t, withRW) {
		t.Error("a state dir counts as a plain --rw grant of its path")
	}
	base := sbxSpec("/bin/true")
	cfg, err := newInitConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	v1, _ := json.Marshal(struct {
		Version             string
		Exe                 string
		Args                []string
		Dir                 string
		ReadOnly, ReadWrite []string
		NetHost             bool
		Env                 []string
		Seccomp             string
		SeccompLog          bool
	}{identityVersion, cfg.Exe, cfg.Args, cfg.Dir, []string{}, []string{}, false, slices.Sorted(slices.Values(cfg.Env)), "default", false})
	if identityKey(cfg, base) != sha256.Sum256(v1) {
		t.Error("an identity without a state dir changed its key")
	}
	// With a state dir, the directory is the identity: another command,
	// the network (prepare), more grants keep the uid that owns it.
	other := sbxSpec("/bin/sh", "-c", "fetch packages")
	other.StateDir, other.Net, other.ReadOnly = "/var/lib/app", NetHost, []string{"/etc/ssl"}
	if identityOf(t, withState) != identityOf(t, other) {
		t.Error("the same state dir under another command, network and grants is another server")
	}
	elsewhere := sbxSpec("/bin/true")
	elsewhere.StateDir = "/var/lib/other"
	if identityOf(t, withState) == identityOf(t, elsewhere) {
		t.Error("two state dirs share an identity")
	}
}
