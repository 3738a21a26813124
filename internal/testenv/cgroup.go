package testenv

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var outerCounter atomic.Uint64

// OuterLimit moves the test process into a new cgroup beneath its own with
// the given memory (bytes, swap off) and pids limits, so that a sandbox bug
// in a test running a memory or fork bomb cannot take the machine down.
// Everything the test starts afterwards inherits the limit. Cleanup moves
// the process back, kills anything left inside and removes the cgroup.
//
// It acts on the whole test process: do not combine it with t.Parallel.
// It fails the test, never skips, when the limit cannot be set up.
func OuterLimit(t testing.TB, memory, pids int64) {
	t.Helper()
	if memory <= 0 || pids <= 0 {
		t.Fatalf("testenv.OuterLimit: both limits must be positive (memory %d, pids %d)", memory, pids)
	}
	name := fmt.Sprintf("mcpsandbox-test-outer-%d-%d", os.Getpid(), outerCounter.Add(1))
	var err error
	if isUnified() {
		err = outerLimitV2(t, name, memory, pids)
	} else {
		err = outerLimitV1(t, name, memory, pids)
	}
	if err != nil {
		t.Fatalf("testenv.OuterLimit: cannot confine the test process, refusing to run it unlimited "+
			"(run the tests as root on a host with the memory and pids controllers): %v", err)
	}
}

func isUnified() bool {
	var st unix.Statfs_t
	return unix.Statfs("/sys/fs/cgroup", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// ownCgroups parses /proc/self/cgroup: v1 controller → path, and the v2 path.
func ownCgroups() (map[string]string, string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, "", err
	}
	v1 := map[string]string{}
	v2 := ""
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			v2 = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			v1[c] = parts[2]
		}
	}
	return v1, v2, nil
}

// v1Mount finds where the v1 hierarchy holding controller is mounted, and
// the hierarchy path mounted there (non-"/" inside cgroup namespaces).
func v1Mount(controller string) (mountpoint, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		pre, post, ok := strings.Cut(s.Text(), " - ")
		if !ok {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 5 || len(b) < 3 || b[0] != "cgroup" {
			continue
		}
		if slices.Contains(strings.Split(b[2], ","), controller) {
			return a[4], a[3], nil
		}
	}
	return "", "", fmt.Errorf("cgroup v1 controller %s is not mounted", controller)
}

func outerLimitV1(t testing.TB, name string, memory, pids int64) error {
	own, _, err := ownCgroups()
	if err != nil {
		return err
	}
	limits := map[string][][2]string{
		"memory": {{"memory.limit_in_bytes", strconv.FormatInt(memory, 10)}, {"memory.memsw.limit_in_bytes", strconv.FormatInt(memory, 10)}},
		"pids":   {{"pids.max", strconv.FormatInt(pids, 10)}},
	}
	var homes, outers []string
	t.Cleanup(func() {
		for _, home := range homes {
			if err := writeFile(filepath.Join(home, "cgroup.procs"), strconv.Itoa(os.Getpid())); err != nil {
				t.Errorf("testenv.OuterLimit: moving the test process back to %s: %v", home, err)
			}
		}
		for _, dir := range outers {
			if err := removeTree(dir); err != nil {
				t.Errorf("testenv.OuterLimit: %v", err)
			}
		}
	})
	for _, c := range []string{"memory", "pids"} {
		mount, root, err := v1Mount(c)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, own[c])
		if err != nil {
			return err
		}
		home := filepath.Join(mount, rel)
		dir := filepath.Join(home, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		outers = append(outers, dir)
		for _, kv := range limits[c] {
			file := filepath.Join(dir, kv[0])
			if kv[0] == "memory.memsw.limit_in_bytes" && !fileExists(file) {
				continue // no swap accounting: nothing to swap into is tracked
			}
			if err := writeFile(file, kv[1]); err != nil {
				return err
			}
		}
		if err := writeFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(os.Getpid())); err != nil {
			return err
		}
		homes = append(homes, home)
	}
	return nil
}

func outerLimitV2(t testing.TB, name string, memory, pids int64) error {
	_, own, err := ownCgroups()
	if err != nil {
		return err
	}
	home := filepath.Join("/sys/fs/cgroup", own)
	dir := filepath.Join(home, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	var enabledHere []string
	moved := false
	t.Cleanup(func() {
		// Controllers must be switched off bottom-up before the test
		// process may live in home again (no internal processes).
		disableSubtree(dir)
		if len(enabledHere) > 0 {
			writeFile(filepath.Join(home, "cgroup.subtree_control"), "-"+strings.Join(enabledHere, " -"))
		}
		if moved {
			if err := writeFile(filepath.Join(home, "cgroup.procs"), strconv.Itoa(os.Getpid())); err != nil {
				t.Errorf("testenv.OuterLimit: moving the test process back to %s: %v", home, err)
			}
		}
		if err := removeTree(dir); err != nil {
			t.Errorf("testenv.OuterLimit: %v", err)
		}
	})
	// Move first: home may enable controllers only once it holds no process.
	if err := writeFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(os.Getpid())); err != nil {
		return err
	}
	moved = true
	enabled := strings.Fields(readFile(filepath.Join(home, "cgroup.subtree_control")))
	want := []string{"memory", "pids"}
	// cpu too where offered, so that what runs inside may set cpu limits.
	if slices.Contains(strings.Fields(readFile(filepath.Join(home, "cgroup.controllers"))), "cpu") {
		want = append(want, "cpu")
	}
	for _, c := range want {
		if slices.Contains(enabled, c) {
			continue
		}
		if err := writeFile(filepath.Join(home, "cgroup.subtree_control"), "+"+c); err != nil {
			return fmt.Errorf("enabling %s in %s (is it in cgroup.controllers?): %w", c, home, err)
		}
		enabledHere = append(enabledHere, c)
	}
	m := strconv.FormatInt(memory, 10)
	if err := writeFile(filepath.Join(dir, "memory.max"), m); err != nil {
		return err
	}
	if file := filepath.Join(dir, "memory.swap.max"); fileExists(file) {
		if err := writeFile(file, "0"); err != nil {
			return err
		}
	}
	return writeFile(filepath.Join(dir, "pids.max"), strconv.FormatInt(pids, 10))
}

// disableSubtree switches off every controller in dir's subtree, deepest first.
func disableSubtree(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			disableSubtree(filepath.Join(dir, e.Name()))
		}
	}
	if on := strings.Fields(readFile(filepath.Join(dir, "cgroup.subtree_control"))); len(on) > 0 {
		writeFile(filepath.Join(dir, "cgroup.subtree_control"), "-"+strings.Join(on, " -"))
	}
}

// removeTree kills what a failed test left in the cgroup tree at dir and
// removes it, deepest first.
func removeTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := removeTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := strings.Fields(readFile(filepath.Join(dir, "cgroup.procs")))
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s still holds processes %v", dir, pids)
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil && pid != os.Getpid() {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(time.Millisecond) // dying processes need a moment to leave
	}
	// rmdir can briefly fail with EBUSY while the last one is leaving.
	for {
		err := os.Remove(dir)
		if err == nil || os.IsNotExist(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("removing cgroup %s: %w", dir, err)
		}
		time.Sleep(time.Millisecond)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0) }

func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
