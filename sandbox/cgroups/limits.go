package cgroups

// Limits are the limits one server's cgroup enforces.
type Limits struct {
	Memory int64   // bytes, 0 = none; swap is always off
	Pids   int64   // 0 = none
	CPU    float64 // cores, 0 = none
}

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

// Stats is a snapshot of a server cgroup's use and limits; zero where unknown.
type Stats struct {
	MemoryBytes uint64
	MemoryLimit uint64
	Pids        uint64
	PidsLimit   uint64
}
