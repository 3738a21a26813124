package cgroups

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The view names co-mounted v1 controllers as the host does.
func TestCgroupViewNamesCoMountedControllers(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"cpu,cpuacct", "memory", "pids"} {
		if err := os.Mkdir(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, link := range []string{"cpu", "cpuacct"} {
		if err := os.Symlink("cpu,cpuacct", filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	dirs := map[string]string{"memory": "/m/s", "pids": "/p/s", "cpu": "/c/s", "freezer": "/f/s"}
	got := v1View(dirs, root)
	want := []ViewDir{
		{Name: "memory", Dir: "/m/s"},
		{Name: "pids", Dir: "/p/s"},
		{Name: "cpu,cpuacct", Links: []string{"cpu", "cpuacct"}, Dir: "/c/s"},
	}
	if !slices.EqualFunc(got, want, func(a, b ViewDir) bool {
		return a.Name == b.Name && a.Dir == b.Dir && slices.Equal(a.Links, b.Links)
	}) {
		t.Errorf("view %+v, want %+v (freezer is mcpsandbox's own and stays hidden)", got, want)
	}
	// Without a cpu limit there is no cpu directory of the server's to show.
	delete(dirs, "cpu")
	if got := v1View(dirs, root); len(got) != 2 {
		t.Errorf("view without cpu: %+v", got)
	}
}
