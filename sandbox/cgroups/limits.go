package cgroups

// Limits are the limits one server's cgroup enforces.
type Limits struct {
	Memory int64   // bytes, 0 = none; swap is always off
	Pids   int64   // 0 = none
	CPU    float64 // cores, 0 = none

	// CPUWeight is the server's share of CPU time against its siblings
	// when they compete, on cgroup v2's scale (cpu.weight: 1–10000, a
	// cgroup's default 100; on v1 cpu.shares, WeightShares). It caps
	// nothing: an idle host leaves the server every core. 0 leaves the
	// default. Unlike the limits, it is applied where the cpu controller
	// can be had and skipped where not (Group.CPUWeight says which).
	CPUWeight uint64
}

// DefaultCPUWeight is a quarter of a cgroup's default weight: the weight
// sandbox servers get unless told otherwise, so that two busy servers
// threads leave the supervisor and the host's programs beside it most of
// the machine when they want it.
const DefaultCPUWeight = 25

// WeightShares is cgroup v1's cpu.shares for a cgroup v2 cpu.weight: the
// same fraction of each version's default (100 and 1024).
func WeightShares(weight uint64) uint64 { return max(weight*1024/100, 2) }

// controllers names the controllers the limits need, the same names in
// cgroup v1 and v2.
func (lim Limits) controllers() []string {
	var c []string
	if lim.Memory > 0 {
		c = append(c, "memory")
	}
	if lim.Pids > 0 {
		c = append(c, "pids")
	}
	if lim.CPU > 0 {
		c = append(c, "cpu")
	}
	return c
}

// weightOnly: the cpu controller is wanted for the weight alone, so it is
// joined only where it can be.
func (lim Limits) weightOnly() bool { return lim.CPUWeight > 0 && lim.CPU == 0 }

// Stats is a snapshot of a server cgroup's use and limits; zero where unknown.
type Stats struct {
	MemoryBytes uint64
	MemoryLimit uint64
	Pids        uint64
	PidsLimit   uint64
}
