package sandbox

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// hostInfo is a host-wide /proc file no namespace scopes and what the
// sandbox shows instead (init_root.c's proc_replaced, proc_masked_dirs and
// replace_boot_id).
type hostInfo struct {
	path  string
	shown func(inside string) bool
	want  string // what shown accepts, for the error
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\n$`)

func fixed(content string) func(string) bool { return func(s string) bool { return s == content } }

var hostInfoFiles = []hostInfo{
	{"/proc/cmdline", fixed("\n"), "an empty command line"},
	{"/proc/interrupts", fixed(""), "empty"},
	{"/proc/softirqs", fixed(""), "empty"},
	{"/proc/diskstats", fixed(""), "empty"},
	{"/proc/loadavg", fixed("0.00 0.00 0.00 0/0 0\n"), "zero load"},
	{"/proc/pressure", fixed(""), "an empty directory"},
	{"/proc/pressure/cpu", func(s string) bool { return strings.HasPrefix(s, "error: ") }, "no such file"},
	{"/proc/pressure/io", func(s string) bool { return strings.HasPrefix(s, "error: ") }, "no such file"},
	{"/proc/pressure/memory", func(s string) bool { return strings.HasPrefix(s, "error: ") }, "no such file"},
	{"/proc/sys/kernel/random/boot_id", uuidPattern.MatchString, "a boot id of its own"},
}

// The host's kernel arguments, interrupt and disk counters, pressure
// stalls, boot id and load are not what a server reads in their place,
// with its own network namespace and with the host's (which changes
// nothing in /proc but /proc/net). TestConfinedUnprivilegedSupervisor runs
// this again in a user namespace, TestConfinedPreforkedInitStage for the
// pre-forked init stage.
func TestConfinedHidesHostInformation(t *testing.T) {
	requireConfinement(t)
	var paths []string
	for _, h := range hostInfoFiles {
		paths = append(paths, h.path)
	}
	bootIDs := map[string]string{}
	for _, net := range []Network{NetNone, NetHost} {
		t.Run(net.String(), func(t *testing.T) {
			spec := sbxSpec()
			spec.Net = net
			f := sbxProbe(t, spec, sbxReadEnv+"="+strings.Join(paths, ","))
			checked := 0
			for _, h := range hostInfoFiles {
				host := sbxRead(h.path)
				if strings.HasPrefix(host, "error: ") {
					continue // this kernel has no such file
				}
				checked++
				inside := f.Read[h.path]
				if !h.shown(inside) {
					t.Errorf("%s inside is %q, want %s", h.path, inside, h.want)
				}
				if first, _, _ := strings.Cut(host, "\n"); len(strings.TrimSpace(first)) > 0 && strings.Contains(inside, first) {
					t.Errorf("%s inside shows the host's %q", h.path, first)
				}
			}
			if checked == 0 {
				t.Fatal("the host has none of the files: the test checked nothing")
			}
			bootIDs[net.String()] = f.Read["/proc/sys/kernel/random/boot_id"]
		})
	}
	if a, b := bootIDs[NetNone.String()], bootIDs[NetHost.String()]; a != "" && a == b {
		t.Errorf("two sandboxes show the same boot id %q, want one each", a)
	}
}

// The boot id stays the same for the sandbox's lifetime, as a boot's does.
func TestConfinedBootIDIsStable(t *testing.T) {
	requireConfinement(t)
	if _, err := os.Stat("/proc/sys/kernel/random/boot_id"); err != nil {
		t.Skip("this kernel has no boot id")
	}
	out := sbxShell(t, sbxSpec(), "cat /proc/sys/kernel/random/boot_id; cat /proc/sys/kernel/random/boot_id")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != lines[1] {
		t.Errorf("two reads of the boot id inside gave %q, want the same twice", lines)
	}
}
