package sandbox

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
	"golang.org/x/sys/unix"
)

// A user's own directory, as `--rw ~/notes` grants it: owned by a non-root
// uid and gid (deliberately different numbers), 0700, with a file in it.
const (
	idmapOwnerUID = 4242
	idmapOwnerGID = 4343
)

func idmapRequireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("idmapped grants are for a root supervisor; unprivileged servers run as the caller already")
	}
}

// idmapUserDir makes dir/name owned by the test owner with the given mode,
// holding old.txt (0600) owned by the same owner.
func idmapUserDir(t *testing.T, name string, mode os.FileMode) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(dir, mode))
	must(os.Chmod(dir, mode))
	must(os.WriteFile(filepath.Join(dir, "old.txt"), []byte("written by the owner\n"), 0o600))
	must(os.Chown(filepath.Join(dir, "old.txt"), idmapOwnerUID, idmapOwnerGID))
	must(os.Chown(dir, idmapOwnerUID, idmapOwnerGID))
	return dir
}

// idmapShell runs script confined and returns stdout, stderr, the exit and
// the log of Start.
func idmapShell(t *testing.T, spec Spec, script string) (string, string, Exit, string) {
	t.Helper()
	logs := testenv.NewLogCapture(t)
	spec.Args = []string{"/bin/sh", "-c", script}
	out, errOut, ex := sbxRunLogged(t, spec, slog.New(slog.NewTextHandler(logs, nil)))
	return out, errOut, ex, logs.String()
}

// idmapOwner returns "uid:gid" of path on the host.
func idmapOwner(t *testing.T, path string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatalf("on the host: %v", err)
	}
	return fmt.Sprintf("%d:%d", st.Uid, st.Gid)
}

// idmapMountOptions returns the options of the mount at path from a
// mountinfo dump taken inside.
func idmapMountOptions(mountinfo, path string) (string, bool) {
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && f[4] == path {
			return f[5], true
		}
	}
	return "", false
}

func TestIDMapReadWriteGrantOfAUsersDirectory(t *testing.T) {
	idmapRequireRoot(t)
	dir := idmapUserDir(t, "notes", 0o700)
	spec := sbxSpec()
	spec.ReadWrite = []string{dir}
	script := fmt.Sprintf(`set -e
cd %s
echo "ids $(id -u):$(id -g)"
echo "dir $(stat -c %%u:%%g .)"
echo "old $(stat -c %%u:%%g old.txt)"
cat old.txt
echo "from the server" > new.txt
mkdir sub
echo appended >> old.txt
cp /bin/true suid
chmod 4755 suid 2>/dev/null && echo "setuid: set" || echo "setuid: refused"
chmod 2755 suid 2>/dev/null && echo "setgid: set" || echo "setgid: refused"
echo "suidmode $(stat -c %%a suid)"
echo MOUNTINFO
cat /proc/self/mountinfo
`, dir)
	out, errOut, ex, logs := idmapShell(t, spec, script)
	if ex.Failed() {
		t.Fatalf("the server could not use its --rw grant: %v\nstdout:\n%s\nstderr:\n%s", ex, out, errOut)
	}
	var ids, dirOwner, oldOwner string
	fmt.Sscanf(out[strings.Index(out, "ids "):], "ids %s\ndir %s\nold %s", &ids, &dirOwner, &oldOwner)
	if ids == "" || dirOwner != ids || oldOwner != ids {
		t.Errorf("inside, the server is %s, the grant is owned by %s and old.txt by %s; want the owner shown as the server", ids, dirOwner, oldOwner)
	}
	if !strings.Contains(out, "written by the owner") {
		t.Errorf("the server could not read the owner's 0600 file:\n%s", out)
	}
	owner := fmt.Sprintf("%d:%d", idmapOwnerUID, idmapOwnerGID)
	for _, name := range []string{"new.txt", "sub", "suid", "old.txt", "."} {
		if got := idmapOwner(t, filepath.Join(dir, name)); got != owner {
			t.Errorf("on the host %s is owned by %s, want the grant's owner %s", name, got, owner)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(b) != "from the server\n" {
		t.Errorf("the host reads new.txt as %q (%v)", b, err)
	}
	// A setuid or setgid file the server planted would run as the owner
	// for any local user: seccomp refuses the modes (seccomp/modes.go).
	for _, want := range []string{"setuid: refused", "setgid: refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("inside, want %q:\n%s", want, out)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "suid")); err != nil || fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
		t.Errorf("suid on the host: %v %v; want the server's file without set-ID bits", fi.Mode(), err)
	}
	opts, ok := idmapMountOptions(out[strings.Index(out, "MOUNTINFO"):], dir)
	if !ok {
		t.Fatalf("%s is not a mount inside", dir)
	}
	for _, want := range []string{"rw", "nosuid", "nodev", "idmapped"} {
		if !strings.Contains(","+opts+",", ","+want+",") {
			t.Errorf("%s is mounted %q inside, want %s", dir, opts, want)
		}
	}
	if strings.Contains(logs, "not writable") {
		t.Errorf("Start warned although the grant is mapped:\n%s", logs)
	}
}

func TestIDMapReadOnlyGrantOfAnOwnerOnlyDirectory(t *testing.T) {
	idmapRequireRoot(t)
	dir := idmapUserDir(t, "private", 0o700)
	spec := sbxSpec()
	spec.ReadOnly = []string{dir}
	out, errOut, ex, _ := idmapShell(t, spec, "cat "+dir+"/old.txt; if echo x > "+dir+"/new.txt; then echo WROTE; fi")
	if ex.Failed() || !strings.Contains(out, "written by the owner") {
		t.Errorf("the server could not read its --ro grant: %v\nstdout:\n%s\nstderr:\n%s", ex, out, errOut)
	}
	if strings.Contains(out, "WROTE") || !strings.Contains(errOut, "Read-only file system") {
		t.Errorf("writing into the --ro grant: stdout %q stderr %q, want EROFS", out, errOut)
	}
	if _, err := os.Lstat(filepath.Join(dir, "new.txt")); err == nil {
		t.Error("a file appeared in the --ro grant on the host")
	}
}

// A root-owned grant is never mapped: the server keeps its own uid there,
// and Start says what to do about it.
func TestIDMapRootOwnedGrantIsNotMapped(t *testing.T) {
	idmapRequireRoot(t)
	dir := filepath.Join(t.TempDir(), "rootdir")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	spec := sbxSpec()
	spec.ReadWrite = []string{dir}
	out, errOut, _, logs := idmapShell(t, spec, fmt.Sprintf(
		"stat -c 'owner %%u' %[1]s; if echo x > %[1]s/new.txt; then echo WROTE; fi; grep ' %[1]s ' /proc/self/mountinfo", dir))
	if !strings.Contains(out, "owner 0\n") {
		t.Errorf("inside, the root-owned grant shows as %q, want owner 0", out)
	}
	if strings.Contains(out, "WROTE") || !strings.Contains(errOut, "Permission denied") {
		t.Errorf("writing into a root-owned 0700 grant: stdout %q stderr %q, want EACCES", out, errOut)
	}
	if strings.Contains(out, "idmapped") {
		t.Errorf("the root-owned grant is idmapped: %s", out)
	}
	if _, err := os.Lstat(filepath.Join(dir, "new.txt")); err == nil {
		t.Error("a file appeared in the root-owned grant on the host")
	}
	for _, want := range []string{"not writable by the server's uid", "chown", "user for the server (User)", "field=ReadWrite", dir, "root-owned grants are never mapped"} {
		if !strings.Contains(logs, want) {
			t.Errorf("Start's warning lacks %q:\n%s", want, logs)
		}
	}
}

// ramfs takes no idmapped mounts: the plain bind stays, and the warning
// names the file system and the kernel's answer.
func TestIDMapUnsupportedFileSystemFallsBack(t *testing.T) {
	idmapRequireRoot(t)
	dir := filepath.Join(t.TempDir(), "ramfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("ramfs", dir, "ramfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
		t.Skipf("cannot mount a ramfs to test with: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	if err := os.Chown(dir, idmapOwnerUID, idmapOwnerGID); err != nil {
		t.Fatal(err)
	}
	spec := sbxSpec()
	spec.ReadWrite = []string{dir}
	out, errOut, _, logs := idmapShell(t, spec, fmt.Sprintf("if echo x > %[1]s/new.txt; then echo WROTE; fi; grep ' %[1]s ' /proc/self/mountinfo", dir))
	if strings.Contains(out, "WROTE") || strings.Contains(out, "idmapped") {
		t.Errorf("the ramfs grant was mapped or written: stdout %q stderr %q", out, errOut)
	}
	if !strings.Contains(out, dir) {
		t.Errorf("the ramfs grant is not mounted inside: %q %q", out, errOut)
	}
	for _, want := range []string{"not writable by the server's uid", "ramfs", "does not support idmapped mounts", "EINVAL"} {
		if !strings.Contains(logs, want) {
			t.Errorf("Start's warning lacks %q:\n%s", want, logs)
		}
	}
}

// A grant whose group is root keeps that group unmapped: readable through
// the mapped owner, but the kernel refuses writes to inodes it cannot map,
// and Start says so.
func TestIDMapRootGroupIsNotMapped(t *testing.T) {
	idmapRequireRoot(t)
	dir := idmapUserDir(t, "rootgroup", 0o770)
	if err := os.Chown(dir, idmapOwnerUID, 0); err != nil {
		t.Fatal(err)
	}
	spec := sbxSpec()
	spec.ReadWrite = []string{dir}
	out, errOut, _, logs := idmapShell(t, spec, fmt.Sprintf("stat -c 'group %%g' %[1]s; cat %[1]s/old.txt; if echo x > %[1]s/new.txt; then echo WROTE; fi", dir))
	if !strings.Contains(out, "written by the owner") {
		t.Errorf("the mapped owner could not read: stdout %q stderr %q", out, errOut)
	}
	if strings.Contains(out, "group 0\n") || strings.Contains(out, "WROTE") {
		t.Errorf("gid 0 was mapped or written through: stdout %q stderr %q", out, errOut)
	}
	for _, want := range []string{"group is root", "chgrp", dir} {
		if !strings.Contains(logs, want) {
			t.Errorf("Start's warning lacks %q:\n%s", want, logs)
		}
	}
}

// --user NAME picks whose rights the server has: its grants keep the
// host's permissions.
func TestIDMapNotForANamedUser(t *testing.T) {
	idmapRequireRoot(t)
	dir := idmapUserDir(t, "notes", 0o700)
	spec := sbxSpec()
	spec.User = "nobody"
	spec.ReadWrite = []string{dir}
	out, errOut, _, logs := idmapShell(t, spec, fmt.Sprintf("if cat %[1]s/old.txt; then echo READ; fi; grep ' %[1]s ' /proc/self/mountinfo", dir))
	if strings.Contains(out, "READ") || strings.Contains(out, "idmapped") {
		t.Errorf("--user nobody reached another user's 0700 grant: stdout %q stderr %q", out, errOut)
	}
	if !strings.Contains(logs, "not writable by the server's uid") {
		t.Errorf("no warning about the unusable grant:\n%s", logs)
	}
}

// Unprivileged, the caller's uid is the server's: no grant is remapped.
func TestIDMapPlanLeavesUserNamespaceGrantsAlone(t *testing.T) {
	dir := t.TempDir()
	cfg := &initConfig{Config: initstage.Config{UID: 1, GID: 1, UserNS: true, Binds: []initstage.Bind{{Path: dir, Writable: true}}}}
	planBindOwners(cfg, slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
	if cfg.Binds[0].IDMap != nil {
		t.Errorf("a user-namespace sandbox got an idmap %+v", cfg.Binds[0].IDMap)
	}
}
