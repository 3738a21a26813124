package cgroups

// backend is one cgroup version's way of doing what Group offers.
type backend interface {
	intoFD() int
	add(pid int) error
	threadJoinFiles() []string
	// oomKills and pidsMaxHits read the kernel's event counters.
	oomKills() uint64
	pidsMaxHits() uint64
	// signalAll kills what is in the cgroup now; empty reports whether
	// nothing is left.
	signalAll() error
	empty() (bool, error)
	remove() error
	stats() Stats
	path() string
	// sweepParents lists the directories where server cgroups of other
	// supervisors may lie: the cgroup's parents (one per v1 controller).
	sweepParents() []string
	// cpuWeight is the Limits.CPUWeight set, 0 when none was.
	cpuWeight() uint64
}
