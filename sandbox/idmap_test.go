package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
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

// idmapDir makes dir/name with exactly the given mode, holding
// old.txt (0600) with text, and returns it with a fail-the-test check for
// the caller's further set-up.
func idmapDir(t *testing.T, name string, mode os.FileMode, text string) (string, func(error)) {
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
	must(os.WriteFile(filepath.Join(dir, "old.txt"), []byte(text), 0o600))
	return dir, must
}

// idmapUserDir makes dir/name owned by the test owner with the given mode,
// holding old.txt (0600) owned by the same owner.
func idmapUserDir(t *testing.T, name string, mode os.FileMode) string {
	t.Helper()
	dir, must := idmapDir(t, name, mode, "written by the owner\n")
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
	script := idmapUseGrant(dir) + `echo "suidmode $(stat -c %a suid)"
echo MOUNTINFO
cat /proc/self/mountinfo
`
	out, errOut, ex, logs := idmapShell(t, spec, script)
	if ex.Failed() {
		t.Fatalf("the server could not use its --rw grant: %v\nstdout:\n%s\nstderr:\n%s", ex, out, errOut)
	}
	ids, dirOwner, oldOwner := idmapOwners(out)
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

// idmapRefusal starts spec and returns Start's refusal, failing the test
// unless it names field and path.
func idmapRefusal(t *testing.T, spec Spec, fieldName, path string) string {
	t.Helper()
	if len(spec.Args) == 0 {
		spec.Args = []string{"/bin/true"}
	}
	p, err := Start(spec, sbxLogger(t))
	if err == nil {
		p.Close()
		t.Fatalf("Start accepted a %s grant the server cannot use", fieldName)
	}
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != fieldName || fe.Value != path || fe.Fix == "" {
		t.Fatalf("Start: %v; want a %s error for %s with a fix", err, fieldName, path)
	}
	return err.Error()
}

// ramfs takes no idmapped mounts: the plain bind stays, and a grant the
// server then cannot use is refused naming the file system and the
// kernel's answer.
func TestIDMapUnsupportedFileSystemFallsBack(t *testing.T) {
	idmapRequireRoot(t)
	dir := idmapRamfs(t)
	if err := os.Chown(dir, idmapOwnerUID, idmapOwnerGID); err != nil {
		t.Fatal(err)
	}
	spec := sbxSpec()
	spec.ReadWrite = []string{dir}
	msg := idmapRefusal(t, spec, "ReadWrite", dir)
	for _, want := range []string{"may not read and write it", "ramfs", "does not support idmapped mounts", "EINVAL"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal lacks %q: %s", want, msg)
		}
	}
	// Open to everyone, the plain bind serves.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	out, errOut, _, logs := idmapShell(t, spec, fmt.Sprintf("if echo x > %[1]s/new.txt; then echo WROTE; fi; grep ' %[1]s ' /proc/self/mountinfo", dir))
	if !strings.Contains(out, "WROTE") || strings.Contains(out, "idmapped") {
		t.Errorf("the 0777 ramfs grant was mapped or not written: stdout %q stderr %q", out, errOut)
	}
	if !strings.Contains(logs, "keeps its owner unmapped") {
		t.Errorf("Start did not say the owner stays unmapped:\n%s", logs)
	}
}

// idmapRamfs mounts a root-owned 0700 ramfs, a file system that takes no
// idmapped mounts, under a temporary directory.
func idmapRamfs(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ramfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("ramfs", dir, "ramfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
		t.Skipf("cannot mount a ramfs to test with: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// A user's grant whose group is root keeps that group unmapped: the kernel would
// refuse every write in it, so --rw is refused with the chgrp that fixes
// it, while --ro reads through the mapped owner.
func TestIDMapRootGroupIsNotMapped(t *testing.T) {
	idmapRequireRoot(t)
	dir := idmapUserDir(t, "rootgroup", 0o770)
	if err := os.Chown(dir, idmapOwnerUID, 0); err != nil {
		t.Fatal(err)
	}
	spec := sbxSpec()
	spec.ReadWrite = []string{dir}
	msg := idmapRefusal(t, spec, "ReadWrite", dir)
	for _, want := range []string{"group is root", fmt.Sprintf("chgrp %d %s", idmapOwnerUID, dir), "ReadOnly"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal lacks %q: %s", want, msg)
		}
	}
	spec.ReadWrite, spec.ReadOnly = nil, []string{dir}
	out, errOut, _, _ := idmapShell(t, spec, fmt.Sprintf("stat -c 'group %%g' %[1]s; cat %[1]s/old.txt", dir))
	if !strings.Contains(out, "written by the owner") || strings.Contains(out, "group 0\n") {
		t.Errorf("--ro through the mapped owner: stdout %q stderr %q; want it read, gid 0 unmapped", out, errOut)
	}
}

// --user NAME picks whose rights the server has: its grants keep the
// host's permissions, and one that user cannot use is refused.
func TestIDMapNotForANamedUser(t *testing.T) {
	idmapRequireRoot(t)
	dir := idmapUserDir(t, "notes", 0o700)
	spec := sbxSpec()
	spec.User = "nobody"
	spec.ReadOnly = []string{dir}
	msg := idmapRefusal(t, spec, "ReadOnly", dir)
	for _, want := range []string{fmt.Sprintf("owned by %d:%d with mode 700", idmapOwnerUID, idmapOwnerGID), "may not read it", "(User)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "idmap") {
		t.Errorf("the refusal of a named user's grant mentions idmapping: %s", msg)
	}
}

// Unprivileged, the caller's uid is the server's: no grant is remapped.
func TestIDMapPlanLeavesUserNamespaceGrantsAlone(t *testing.T) {
	dir := t.TempDir()
	cfg := &initConfig{Config: initstage.Config{UID: 1, GID: 1, UserNS: true, Binds: []initstage.Bind{{Path: dir, Writable: true}}}}
	planBindOwners(cfg, true, slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
	if cfg.Binds[0].IDMap != nil {
		t.Errorf("a user-namespace sandbox got an idmap %+v", cfg.Binds[0].IDMap)
	}
}

// idmapUseGrant is the opening of a script that uses the grant dir as a
// server would (old.txt in it is the owner's): it prints the server's ids
// and the owners it sees (idmapOwners reads them), reads, writes, makes a
// directory, and tries the set-ID bits on a program it copies in.
func idmapUseGrant(dir string) string {
	return fmt.Sprintf(`set -e
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
`, dir)
}

// idmapOwners reads what idmapUseGrant's script printed: the server's
// uid:gid, and the owners of the grant and of old.txt as it sees them.
func idmapOwners(out string) (ids, dirOwner, oldOwner string) {
	i := strings.Index(out, "ids ")
	if i < 0 {
		return "", "", ""
	}
	fmt.Sscanf(out[i:], "ids %s\ndir %s\nold %s", &ids, &dirOwner, &oldOwner)
	return ids, dirOwner, oldOwner
}
