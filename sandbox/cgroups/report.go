package cgroups

import (
	"fmt"
	"sort"
	"strings"

	containerd "github.com/containerd/cgroups/v3"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// Report is what `mcpsandbox doctor` says about cgroups on this host.
type Report struct {
	Mode        string            // "v1", "hybrid", "v2" or "unavailable"
	Own         map[string]string // controller ("unified" for v2) → the supervisor's own cgroup path
	Controllers []Controller      // memory, pids, cpu
	CanCreate   bool              // a server cgroup can be created beneath the supervisor's own
	// Problem says why not, with the fix; empty when CanCreate. Like a
	// Controller's, it names the host check as {Doctor}, for the caller to
	// render its way (field.Refs).
	Problem string
}

// Controller says whether one controller's limit can be enforced here.
type Controller struct {
	Name    string
	Usable  bool
	Problem string // what is missing and the fix, {Field} references kept; empty when Usable
}

// OK reports whether every limit of the default confinement can be enforced.
func (r Report) OK() bool {
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

func (r Report) String() string {
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
		fmt.Fprintf(&b, "server cgroups: CANNOT be created: %s\n", field.Refs(r.Problem, field.Plain))
	}
	for _, c := range r.Controllers {
		if c.Usable {
			fmt.Fprintf(&b, "%s limit: enforceable\n", c.Name)
		} else {
			fmt.Fprintf(&b, "%s limit: NOT enforceable: %s\n", c.Name, field.Refs(c.Problem, field.Plain))
		}
	}
	return b.String()
}

// Info probes this host's cgroups the way `run` uses them: it creates
// (and removes) a cgroup beneath the supervisor's own for each limit. On
// cgroup v2 that may move this process into its leaf cgroup, as run would.
func Info() Report {
	r := Report{Own: map[string]string{}}
	switch containerd.Mode() {
	case containerd.Legacy:
		r.Mode = "v1"
	case containerd.Hybrid:
		r.Mode = "hybrid"
	case containerd.Unified:
		r.Mode = "v2"
	default:
		r.Mode = "unavailable"
	}
	if v1, unified, err := containerd.ParseCgroupFileUnified("/proc/self/cgroup"); err == nil {
		for _, c := range []string{"memory", "pids", "cpu", "freezer"} {
			if p, ok := v1[c]; ok {
				r.Own[c] = p
			}
		}
		if r.Mode == "v2" || r.Mode == "hybrid" {
			r.Own["unified"] = unified
		}
	}

	r.CanCreate, r.Problem = probe(Limits{})
	for _, c := range []struct {
		name string
		lim  Limits
	}{
		{"memory", Limits{Memory: 64 << 20}},
		{"pids", Limits{Pids: 64}},
		{"cpu", Limits{CPU: 1}},
	} {
		ok, problem := probe(c.lim)
		r.Controllers = append(r.Controllers, Controller{Name: c.name, Usable: ok, Problem: problem})
	}
	return r
}

// probe says whether a cgroup with lim can be made here, and if not why,
// the references in the message kept (field.Keep).
func probe(lim Limits) (bool, string) {
	cg, err := New("doctor-probe", lim)
	if err == nil {
		err = cg.Delete()
	}
	if err != nil {
		return false, field.Message(err, field.Keep)
	}
	return true, ""
}
