package sandbox

import (
	"bufio"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	containerd "github.com/containerd/cgroups/v3"
	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
	"github.com/mcpsandbox/mcpsandbox/sandbox/cgroups"
	"golang.org/x/sys/unix"
)

// sbxCgroupfsEnv makes this test binary, run confined, report what it sees
// of /sys and its cgroup (runCgroupfsProbe), then wait for stdin to close.
const sbxCgroupfsEnv = "MCPSANDBOX_SBX_CGROUPFS"

type cgroupfsFacts struct {
	Tree       []string          // directories and links beneath /sys ("path -> target" for links)
	TopFiles   []string          // other entries of /sys, /sys/fs and (v1) /sys/fs/cgroup
	Limits     map[string]string // limit file beneath /sys/fs/cgroup → content
	Writes     map[string]string // file → error writing it ("" = written)
	Mkdir      string            // error creating a child cgroup
	SysCreate  string            // error creating a file in /sys
	Mounts     []cgroupfsMount   // mounts at or beneath /sys
	ProcCgroup string
}

type cgroupfsMount struct {
	Point, Root, FSType, Options string
}

// cgroupfsLimitFiles are the limit files of each version, as runtimes read them.
var cgroupfsLimitFiles = map[bool][]string{
	false: {"memory/memory.limit_in_bytes", "pids/pids.max", "cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us"},
	true:  {"memory.max", "pids.max", "cpu.max"},
}

func runCgroupfsProbe() int {
	f := cgroupfsFacts{Limits: map[string]string{}, Writes: map[string]string{}}
	var st unix.Statfs_t
	v2 := unix.Statfs(cgroups.Mount, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
	filepath.WalkDir("/sys", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			f.Tree = append(f.Tree, p+": "+err.Error())
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			f.Tree = append(f.Tree, p+" -> "+target)
		case d.IsDir():
			f.Tree = append(f.Tree, p)
		case filepath.Dir(p) == "/sys" || filepath.Dir(p) == "/sys/fs" || (!v2 && filepath.Dir(p) == cgroups.Mount):
			f.TopFiles = append(f.TopFiles, p)
		}
		return nil
	})
	for _, name := range cgroupfsLimitFiles[v2] {
		if b, err := os.ReadFile(filepath.Join(cgroups.Mount, name)); err == nil {
			f.Limits[name] = strings.TrimSpace(string(b))
		}
	}
	// Raise each limit (memory doubled, pids and cpu unlimited) and ask to
	// be moved: every write must fail.
	writes := map[string]string{"pids/pids.max": "max", "cpu/cpu.cfs_quota_us": "-1", "memory/cgroup.procs": "0", "memory/notify_on_release": "1"}
	if v2 {
		writes = map[string]string{"pids.max": "max", "cpu.max": "max", "cgroup.procs": "0", "cgroup.subtree_control": "+pids"}
	}
	memFile := cgroupfsLimitFiles[v2][0]
	if n, err := strconv.ParseUint(f.Limits[memFile], 10, 64); err == nil {
		writes[memFile] = strconv.FormatUint(2*n, 10)
	}
	for name, value := range writes {
		f.Writes[name] = errString(os.WriteFile(filepath.Join(cgroups.Mount, name), []byte(value), 0))
	}
	child := filepath.Join(cgroups.Mount, "child")
	if !v2 {
		child = filepath.Join(cgroups.Mount, "memory", "child")
	}
	f.Mkdir = errString(os.Mkdir(child, 0o755))
	f.SysCreate = errString(os.WriteFile("/sys/probe", nil, 0o644))
	if data, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			pre, post, ok := strings.Cut(line, " - ")
			fields, postFields := strings.Fields(pre), strings.Fields(post)
			if ok && len(fields) > 5 && len(postFields) > 0 && pathrule.Within(fields[4], "/sys") {
				f.Mounts = append(f.Mounts, cgroupfsMount{Point: fields[4], Root: fields[3], FSType: postFields[0], Options: fields[5]})
			}
		}
	}
	b, _ := os.ReadFile("/proc/self/cgroup")
	f.ProcCgroup = string(b)
	if err := json.NewEncoder(os.Stdout).Encode(f); err != nil {
		return 1
	}
	io.Copy(io.Discard, os.Stdin)
	return 0
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// cgroupfsExpectedV1 names the directories /sys/fs/cgroup should hold on
// this cgroup v1 host for a server with every limit set, and their links.
func cgroupfsExpectedV1() []string {
	var want []string
	for _, c := range []string{"memory", "pids", "cpu"} { // not freezer: mcpsandbox's own
		name := c
		if target, err := os.Readlink(filepath.Join(cgroups.Mount, c)); err == nil {
			name = target
		}
		if !slices.Contains(want, filepath.Join(cgroups.Mount, name)) {
			want = append(want, filepath.Join(cgroups.Mount, name))
		}
		if name != c {
			want = append(want, filepath.Join(cgroups.Mount, c)+" -> "+name)
		}
	}
	return want
}

// The server sees its own cgroup, read-only, at /sys/fs/cgroup, and nothing
// else: not its parent, not a sibling server's cgroup, nothing of sysfs.
func TestConfinedSeesItsOwnCgroupReadOnly(t *testing.T) {
	requireConfinement(t)
	// A sibling: another server's cgroup beside this one's.
	sibling, err := Start(sbxSpec("/bin/cat"), sbxLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer sibling.Close()
	siblingDir := sibling.(*confinedProcess).cg.Path()

	spec := sbxSpec(os.Args[0])
	spec.Env = []string{sbxCgroupfsEnv + "=1"}
	spec.CPU = 0.5
	p, err := Start(spec, sbxLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ownDir := p.(*confinedProcess).cg.Path()
	if filepath.Dir(ownDir) != filepath.Dir(siblingDir) {
		t.Fatalf("the two servers' cgroups %s and %s are not siblings", ownDir, siblingDir)
	}
	var f cgroupfsFacts
	line, _ := bufio.NewReader(p.Stdout()).ReadBytes('\n')
	if err := json.Unmarshal(line, &f); err != nil {
		t.Fatalf("probe output %q: %v (server: %v)", line, err, escapeExitSoFar(p))
	}
	// The limits are still the spec's as the supervisor reads them.
	if st := p.Stats(); st.MemoryLimit != uint64(spec.Memory) || st.PidsLimit != uint64(spec.Pids) {
		t.Errorf("after the server's writes its limits are %d bytes / %d pids, want %d / %d", st.MemoryLimit, st.PidsLimit, spec.Memory, spec.Pids)
	}
	p.Stdin().Close()
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the probe did not end when its stdin closed")
	}
	if ex := p.Exit(); ex.Failed() {
		t.Errorf("probe ended with %v", ex)
	}

	v2 := containerd.Mode() == containerd.Unified
	const cfsPeriod = 100000 // µs, the CPU bandwidth period the cgroups package sets
	cpuQuota := int64(spec.CPU * cfsPeriod)
	wantTree := []string{"/sys", "/sys/fs", cgroups.Mount}
	wantLimits := map[string]string{"memory.max": itoa(spec.Memory), "pids.max": itoa(spec.Pids), "cpu.max": itoa(cpuQuota) + " " + itoa(cfsPeriod)}
	if !v2 {
		wantTree = append(wantTree, cgroupfsExpectedV1()...)
		wantLimits = map[string]string{
			"memory/memory.limit_in_bytes": itoa(spec.Memory), "pids/pids.max": itoa(spec.Pids),
			"cpu/cpu.cfs_quota_us": itoa(cpuQuota), "cpu/cpu.cfs_period_us": itoa(cfsPeriod),
		}
	}
	slices.Sort(wantTree)
	slices.Sort(f.Tree)
	if !slices.Equal(f.Tree, wantTree) {
		t.Errorf("/sys holds the directories and links\n%s\nwant only\n%s", strings.Join(f.Tree, "\n"), strings.Join(wantTree, "\n"))
	}
	if len(f.TopFiles) > 0 {
		t.Errorf("/sys holds files besides the cgroup directories: %v", f.TopFiles)
	}
	for name, want := range wantLimits {
		if got := f.Limits[name]; got != want {
			t.Errorf("%s/%s reads %q inside, want %q", cgroups.Mount, name, got, want)
		}
	}
	t.Logf("writes inside: %v", f.Writes)
	for name, e := range f.Writes {
		if !strings.Contains(e, "read-only file system") && !strings.Contains(e, "permission denied") {
			t.Errorf("writing %s/%s: %q, want EROFS or EACCES", cgroups.Mount, name, e)
		}
	}
	if len(f.Writes) < 4 {
		t.Errorf("only %d writes were tried: %v", len(f.Writes), f.Writes)
	}
	for what, e := range map[string]string{"creating a child cgroup": f.Mkdir, "creating a file in /sys": f.SysCreate} {
		if !strings.Contains(e, "read-only file system") && !strings.Contains(e, "permission denied") {
			t.Errorf("%s: %q, want EROFS or EACCES", what, e)
		}
	}

	cgroupMounts := 0
	for _, m := range f.Mounts {
		opts := strings.Split(m.Options, ",")
		switch m.FSType {
		case "cgroup", "cgroup2":
			cgroupMounts++
			// The mount's root is the server's cgroup: its namespace root.
			if m.Root != "/" {
				t.Errorf("%s shows cgroup %q, want the server's own (the namespace root /)", m.Point, m.Root)
			}
			for _, o := range []string{"ro", "nosuid", "nodev", "noexec"} {
				if !slices.Contains(opts, o) {
					t.Errorf("%s is mounted %q, want %s", m.Point, m.Options, o)
				}
			}
		case "tmpfs":
			if m.Point != "/sys" || !slices.Contains(opts, "ro") {
				t.Errorf("tmpfs at %s mounted %q, want only /sys, read-only", m.Point, m.Options)
			}
		default:
			t.Errorf("%s at %s: nothing but the cgroup view belongs in /sys", m.FSType, m.Point)
		}
	}
	if want := len(wantTree) - 3 - strings.Count(strings.Join(wantTree, "\n"), " -> "); !v2 && cgroupMounts != want {
		t.Errorf("%d cgroup mounts inside, want %d: %+v", cgroupMounts, want, f.Mounts)
	}
	for _, line := range strings.Split(strings.TrimSpace(f.ProcCgroup), "\n") {
		if !strings.HasSuffix(line, ":/") {
			t.Errorf("/proc/self/cgroup inside shows %q, want the namespace root", line)
		}
	}
	// Nowhere does the host's path of either cgroup show.
	all, _ := json.Marshal(f)
	for _, dir := range []string{ownDir, siblingDir} {
		if strings.Contains(string(all), filepath.Base(dir)) {
			t.Errorf("the cgroup name %s is visible inside: %s", filepath.Base(dir), all)
		}
	}
}

// Node sizes V8's heap from the cgroup's memory limit, which it finds
// through /proc/self/cgroup and /sys/fs/cgroup (libuv's
// uv_get_constrained_memory): the limit must reach it, and the heap must
// fit in it rather than be sized for the host.
func TestConfinedNodeSeesItsMemoryLimit(t *testing.T) {
	requireConfinement(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	spec := sbxSpec(node, "-e", `console.log(process.constrainedMemory(), require("v8").getHeapStatistics().heap_size_limit)`)
	spec.Memory = 512 << 20
	out, errOut, ex := sbxRun(t, spec)
	if ex.Failed() {
		t.Fatalf("node: %v\n%s", ex, errOut)
	}
	constrained, heap, _ := strings.Cut(strings.TrimSpace(out), " ")
	if constrained != itoa(spec.Memory) {
		t.Errorf("process.constrainedMemory() inside is %s, want the --memory limit %d", constrained, spec.Memory)
	}
	if n, err := strconv.ParseInt(heap, 10, 64); err != nil || n >= spec.Memory {
		t.Errorf("V8's heap limit inside is %s bytes, want it below the --memory limit %d", heap, spec.Memory)
	} else {
		t.Logf("V8 heap limit under --memory %d: %d", spec.Memory, n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
