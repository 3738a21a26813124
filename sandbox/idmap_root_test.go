package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// idmapRootDir makes dir/name owned by root with the given mode, holding
// old.txt (root's, 0600) and theirs.txt (another user's, 0644).
func idmapRootDir(t *testing.T, name string, mode os.FileMode) string {
	t.Helper()
	dir, must := idmapDir(t, name, mode, "written by root\n")
	must(os.WriteFile(filepath.Join(dir, "theirs.txt"), []byte("written by another user\n"), 0o644))
	must(os.Chown(filepath.Join(dir, "theirs.txt"), idmapOwnerUID, idmapOwnerGID))
	return dir
}

// `sudo mcpsandbox run --rw /srv/notes ...`: root's ownership of a
// root-owned grant is lent to the server. Inside, root's files are its
// own; on the host what it writes is root's; it can set no set-ID bit,
// cannot write another user's file there, and a root-owned grant it could
// use as it stands (world-readable --ro) stays root's, so root's 0600 file
// in that one stays closed.
func TestIDMapRootOwnedGrantIsLentToTheServer(t *testing.T) {
	idmapRequireRoot(t)
	dir := idmapRootDir(t, "notes", 0o755)
	other := idmapRootDir(t, "other", 0o755)
	spec := sbxSpec()
	spec.ReadWrite = []string{dir}
	spec.ReadOnly = []string{other}
	script := idmapUseGrant(dir) + fmt.Sprintf(`test ! -x /usr/bin/python3 || /usr/bin/python3 -c "
import os, struct
try:
    os.setxattr('suid', 'security.capability', struct.pack('<IIIII', 0x02000001, 0xffffffff, 0, 0xffffffff, 0))
    print('caps: set')
except PermissionError:
    print('caps: refused')
"
cat theirs.txt
echo x >> theirs.txt 2>/dev/null && echo "theirs: written" || echo "theirs: refused"
mv theirs.txt moved.txt 2>/dev/null && echo "theirs: moved" || echo "theirs: kept"
rm -f theirs.txt 2>/dev/null || true; test -e theirs.txt && echo "theirs: stays" || echo "theirs: removed"
cat %s/old.txt 2>/dev/null && echo "other: read" || echo "other: refused"
echo MOUNTINFO
cat /proc/self/mountinfo
`, other)
	out, errOut, ex, _ := idmapShell(t, spec, script)
	if ex.Failed() {
		t.Fatalf("the server could not use its --rw grant of a root-owned directory: %v\nstdout:\n%s\nstderr:\n%s", ex, out, errOut)
	}
	ids, dirOwner, oldOwner := idmapOwners(out)
	if ids == "" || strings.HasPrefix(ids, "0:") || dirOwner != ids || oldOwner != ids {
		t.Errorf("inside, the server is %s, the grant is owned by %s and old.txt by %s; want root shown as the server", ids, dirOwner, oldOwner)
	}
	wants := []string{"written by root", "written by another user", "setuid: refused", "setgid: refused", "theirs: refused", "theirs: kept", "theirs: stays", "other: refused"}
	if _, err := os.Stat("/usr/bin/python3"); err == nil { // the probe of file capabilities
		wants = append(wants, "caps: refused")
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("inside, want %q:\n%s", want, out)
		}
	}
	for _, name := range []string{"new.txt", "sub", "suid", "old.txt", "."} {
		if got := idmapOwner(t, filepath.Join(dir, name)); got != "0:0" {
			t.Errorf("on the host %s is owned by %s, want root's 0:0", name, got)
		}
	}
	if n, err := unix.Getxattr(filepath.Join(dir, "suid"), "security.capability", nil); err == nil {
		t.Errorf("suid on the host has file capabilities (%d bytes)", n)
	}
	if got := idmapOwner(t, filepath.Join(dir, "theirs.txt")); got != fmt.Sprintf("%d:%d", idmapOwnerUID, idmapOwnerGID) {
		t.Errorf("another user's file is owned by %s on the host", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "old.txt")); err != nil || string(b) != "written by root\nappended\n" {
		t.Errorf("the host reads old.txt as %q (%v)", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "suid")); err != nil || fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
		t.Errorf("suid on the host: %v %v; want the server's file without set-ID bits", fi.Mode(), err)
	}
	info := out[strings.Index(out, "MOUNTINFO"):]
	opts, ok := idmapMountOptions(info, dir)
	if !ok {
		t.Fatalf("%s is not a mount inside", dir)
	}
	for _, want := range []string{"rw", "nosuid", "nodev", "idmapped"} {
		if !strings.Contains(","+opts+",", ","+want+",") {
			t.Errorf("%s is mounted %q inside, want %s", dir, opts, want)
		}
	}
	if opts, _ := idmapMountOptions(info, other); strings.Contains(opts, "idmapped") {
		t.Errorf("the world-readable --ro grant %s is mounted %q: want root's files left root's", other, opts)
	}
}

// A root-only directory granted --ro is lent too, and stays read-only.
func TestIDMapRootOwnedReadOnlyGrantStaysReadOnly(t *testing.T) {
	idmapRequireRoot(t)
	dir := idmapRootDir(t, "private", 0o700)
	spec := sbxSpec()
	spec.ReadOnly = []string{dir}
	out, errOut, ex, _ := idmapShell(t, spec, "cat "+dir+"/old.txt; if echo x > "+dir+"/new.txt; then echo WROTE; fi; if echo x >> "+dir+"/old.txt; then echo APPENDED; fi")
	if ex.Failed() || !strings.Contains(out, "written by root") {
		t.Errorf("the server could not read its --ro grant: %v\nstdout:\n%s\nstderr:\n%s", ex, out, errOut)
	}
	if strings.Contains(out, "WROTE") || strings.Contains(out, "APPENDED") || !strings.Contains(errOut, "Read-only file system") {
		t.Errorf("writing into the --ro grant: stdout %q stderr %q, want EROFS", out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "old.txt")); string(b) != "written by root\n" {
		t.Errorf("old.txt on the host: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "new.txt")); err == nil {
		t.Error("a file appeared in the --ro grant on the host")
	}
}

// No owner, root least, is shown as the server where it could make a
// set-ID file: under a seccomp filter that only logs, the grant is
// refused, and the refusal says why and what to do.
func TestIDMapOwnersNeedTheDefaultSeccomp(t *testing.T) {
	idmapRequireRoot(t)
	dir := idmapRootDir(t, "notes", 0o755)
	spec := sbxSpec()
	spec.SeccompLog = true
	spec.ReadWrite = []string{dir}
	msg := idmapRefusal(t, spec, "ReadWrite", dir)
	for _, want := range []string{"owned by 0:0 with mode 755", "may not read and write it", "default seccomp profile", "set-user-ID root program", "chmod"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal lacks %q: %s", want, msg)
		}
	}
	users := idmapUserDir(t, "users", 0o700)
	spec.ReadWrite = []string{users}
	msg = idmapRefusal(t, spec, "ReadWrite", users)
	for _, want := range []string{fmt.Sprintf("owned by %d:%d with mode 700", idmapOwnerUID, idmapOwnerGID), "default seccomp profile", fmt.Sprintf("set-user-ID program of uid %d", idmapOwnerUID)} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal of a user's grant lacks %q: %s", want, msg)
		}
	}
}

// A file system without idmapped mounts is a refusal naming it, never a
// grant the server finds it cannot use.
func TestIDMapRootOwnedGrantOnAFileSystemWithoutIDMaps(t *testing.T) {
	idmapRequireRoot(t)
	dir := idmapRamfs(t)
	spec := sbxSpec()
	spec.ReadWrite = []string{dir}
	msg := idmapRefusal(t, spec, "ReadWrite", dir)
	for _, want := range []string{"owned by 0:0 with mode 700", "may not read and write it", "ramfs", "does not support idmapped mounts", "EINVAL"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal lacks %q: %s", want, msg)
		}
	}
}

// doctor says what becomes of a root-owned grant, and whether this host's
// temporary directory takes the idmapped mount it needs; a file system
// that does not is named with the kernel's answer.
func TestDoctorSaysWhatBecomesOfRootOwnedGrants(t *testing.T) {
	idmapRequireRoot(t)
	c := checkRootGrants(true)
	for _, want := range []string{"root-owned grant", "idmapped", "lands as root's", "set-ID modes refused", "{Seccomp} default", "takes idmapped mounts"} {
		if !strings.Contains(c.Detail, want) {
			t.Errorf("doctor's %q line lacks %q: %s", c.Part, want, c.Detail)
		}
	}
	if !c.OK {
		t.Errorf("doctor says %s cannot be idmapped, though the tests lend root's directories there: %s", os.TempDir(), c.Detail)
	}
	where, fs, err := probeIDMapIn(idmapRamfs(t))
	if err == nil || fs != "ramfs" || !strings.Contains(err.Error(), "does not support idmapped mounts") {
		t.Errorf("a ramfs at %s (%s): %v; want it named as taking no idmapped mounts", where, fs, err)
	}
}
