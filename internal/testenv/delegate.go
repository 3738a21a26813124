package testenv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// UnprivUID is the uid tests run an unprivileged supervisor as. Not 65534:
// that is also what unmapped ids look like inside a user namespace, so it
// could hide a missing mapping. It needs no passwd entry.
const UnprivUID = 4242

// DelegateV1Cgroups creates name beneath this process's own cgroup in each
// v1 controller a server cgroup uses and hands it to uid, as Delegate=yes
// does, and returns the directories. Cleanup removes them with anything
// inside. It skips the test where no v1 controller is mounted.
func DelegateV1Cgroups(t *testing.T, name string, uid int) []string {
	t.Helper()
	paths, _, err := ownCgroups()
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, c := range []string{"memory", "pids", "cpu", "freezer"} {
		mount, _, err := v1Mount(c)
		if err != nil {
			continue // not mounted
		}
		dir := filepath.Join(mount, paths[c], name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
		t.Cleanup(func() { RemoveCgroupTree(t, dir) })
		if err := os.Chown(dir, uid, uid); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"cgroup.procs", "tasks"} {
			os.Chown(filepath.Join(dir, f), uid, uid)
		}
	}
	if len(dirs) == 0 {
		t.Skip("no cgroup v1 controllers here; the v2 delegation path is the cgroup tests' concern")
	}
	return dirs
}

// RemoveCgroupTree removes a cgroup directory and its children, deepest
// first; it fails the test when one is still busy.
func RemoveCgroupTree(t *testing.T, dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			RemoveCgroupTree(t, filepath.Join(dir, e.Name()))
		}
	}
	if err := syscall.Rmdir(dir); err != nil && !os.IsNotExist(err) {
		t.Errorf("removing cgroup %s: %v", dir, err)
	}
}
