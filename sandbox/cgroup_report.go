package sandbox

import (
	"fmt"
	"sort"
	"strings"

	"github.com/containerd/cgroups/v3"
)

// CgroupReport is what `mcpsandbox doctor` says about cgroups on this host.
type CgroupReport struct {
	Mode        string             // "v1", "hybrid", "v2" or "unavailable"
	Own         map[string]string  // controller ("unified" for v2) → the supervisor's own cgroup path
	Controllers []CgroupController // memory, pids, cpu
	CanCreate   bool               // a server cgroup can be created beneath the supervisor's own
	Problem     string             // why not, with the fix; empty when CanCreate
}

// CgroupController says whether one controller's limit can be enforced here.
type CgroupController struct {
	Name    string
	Usable  bool
	Problem string // what is missing and the fix; empty when Usable
}

// OK reports whether every limit of the default confinement can be enforced.
func (r CgroupReport) OK() bool {
	if !r.CanCreate {
		return false
	}
	for _, c := range r.Controllers {
		if !c.Usable {
			return false
		}
	}
	return true
}

func (r CgroupReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cgroup mode: %s\n", r.Mode)
	keys := make([]string, 0, len(r.Own))
	for k := range r.Own {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "own cgroup (%s): %s\n", k, r.Own[k])
	}
	if r.CanCreate {
		b.WriteString("server cgroups: can be created\n")
	} else {
		fmt.Fprintf(&b, "server cgroups: CANNOT be created: %s\n", r.Problem)
	}
	for _, c := range r.Controllers {
		if c.Usable {
			fmt.Fprintf(&b, "%s limit: enforceable\n", c.Name)
		} else {
			fmt.Fprintf(&b, "%s limit: NOT enforceable: %s\n", c.Name, c.Problem)
		}
	}
	return b.String()
}

// CgroupInfo probes this host's cgroups the way `run` uses them: it creates
// (and removes) a cgroup beneath the supervisor's own for each limit. On
// cgroup v2 that may move this process into its leaf cgroup, as run would.
func CgroupInfo() CgroupReport {
	r := CgroupReport{Own: map[string]string{}}
	switch cgroups.Mode() {
	case cgroups.Legacy:
		r.Mode = "v1"
	case cgroups.Hybrid:
		r.Mode = "hybrid"
	case cgroups.Unified:
		r.Mode = "v2"
	default:
		r.Mode = "unavailable"
	}
	if v1, unified, err := cgroups.ParseCgroupFileUnified("/proc/self/cgroup"); err == nil {
		for _, c := range []string{"memory", "pids", "cpu", "freezer"} {
			if p, ok := v1[c]; ok {
				r.Own[c] = p
			}
		}
		if r.Mode == "v2" || r.Mode == "hybrid" {
			r.Own["unified"] = unified
		}
	}

	r.CanCreate, r.Problem = probeCgroup(cgroupLimits{})
	for _, c := range []struct {
		name string
		lim  cgroupLimits
	}{
		{"memory", cgroupLimits{Memory: 64 << 20}},
		{"pids", cgroupLimits{Pids: 64}},
		{"cpu", cgroupLimits{CPU: 1}},
	} {
		ok, problem := probeCgroup(c.lim)
		r.Controllers = append(r.Controllers, CgroupController{Name: c.name, Usable: ok, Problem: problem})
	}
	return r
}

func probeCgroup(lim cgroupLimits) (bool, string) {
	cg, err := newServerCgroup("doctor-probe", lim)
	if err != nil {
		return false, err.Error()
	}
	if err := cg.Delete(); err != nil {
		return false, err.Error()
	}
	return true, ""
}
