package cgroups

import (
	"encoding/json"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/cgroups/v3/cgroup1"
)

func TestCgroupInfoOnThisHost(t *testing.T) {
	requireV1(t)
	r := Info()
	if r.Mode != "hybrid" && r.Mode != "v1" {
		t.Errorf("Mode = %q on a v1 host", r.Mode)
	}
	own, err := cgroup1.ParseCgroupFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"memory", "pids", "cpu"} {
		if r.Own[c] != own[c] {
			t.Errorf("Own[%s] = %q, want %q", c, r.Own[c], own[c])
		}
	}
	if !r.OK() || !r.CanCreate || len(r.Controllers) != 3 {
		t.Fatalf("report as root on this host is not all usable:\n%s", r)
	}
	text := r.String()
	for _, want := range []string{"cgroup mode: " + r.Mode, "own cgroup (memory): " + own["memory"], "memory limit: enforceable", "pids limit: enforceable", "cpu limit: enforceable"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	// The probes leave nothing behind.
	left, _ := filepath.Glob(filepath.Join(Mount, "memory", own["memory"], "mcpsandbox-doctor-probe-*"))
	if len(left) > 0 {
		t.Errorf("probe cgroups left behind: %v", left)
	}
}

func TestCgroupInfoUnprivileged(t *testing.T) {
	requireV1(t)
	cmd := helperCmd(t, testenv.SelfForOthers(t), "info")
	asNobody(cmd)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("role as uid 65534: %v\n%s", err, out)
	}
	var r Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.OK() || r.CanCreate {
		t.Fatalf("uid 65534 without delegation reported usable:\n%s", r)
	}
	for _, want := range []string{"no permission to create a cgroup", "run mcpsandbox as root"} {
		if !strings.Contains(r.Problem, want) {
			t.Errorf("Problem %q does not say %q", r.Problem, want)
		}
	}
	for _, c := range r.Controllers {
		if c.Usable || c.Problem == "" {
			t.Errorf("controller %+v reported usable for uid 65534", c)
		}
	}
	if !strings.Contains(r.String(), "server cgroups: CANNOT be created") {
		t.Errorf("report text hides the failure:\n%s", r)
	}
}
