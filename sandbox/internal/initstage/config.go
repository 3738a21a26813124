package initstage

// Config is everything the init stage reads, resolved by the supervisor and
// sent over a pipe (never argv or env) in wire.go's encoding.
type Config struct {
	Args []string // argv; Args[0] as the user gave it
	Exe  string   // the executable's real path, the same inside and outside
	Env  []string // the complete environment of the server
	Dir  string   // working directory inside

	Binds   []Bind // user binds, parents before children
	ExeBind bool   // Exe lies outside the visible paths: bind it read-only
	// Unix sockets found in the grants, each covered by an empty read-only
	// file once the grants are mounted.
	MaskedSockets []string
	// The server's program files within writable grants, and the
	// directories and symlinks on the way to them there, parents first:
	// each made a mount point (never renamed or removed inside), files
	// and symlinks read-only.
	Pins []string

	TmpSize   int64
	Tmpfs     []string // more tmpfs mounts like HOME's (TmpSize each), parents first
	HostNetNS bool     // share the host's network namespace: no CLONE_NEWNET, no lo to bring up
	NoFile    uint64
	FileSize  uint64 // RLIMIT_FSIZE in bytes; 0: no limit
	NoExecTmp bool   // mount /tmp and HOME noexec

	UID, GID uint32 // the server's ids as seen inside the sandbox
	UserNS   bool   // the sandbox has its own user namespace (unprivileged supervisor)

	// Egress, when set, has the init stage make egress capture's sockets in
	// the sandbox's network namespace and hand them over on Files.Egress
	// (init_net.c; ReceiveSockets takes them).
	Egress *EgressSockets

	Seccomp []byte            // compiled BPF, loaded right before exec; empty only in tests
	Etc     map[string][]byte // /etc files made from the configuration (passwd, group, hosts)

	// The rules the init stage adds to the Landlock ruleset handed over as
	// Files.Landlock before the server restricts itself with it; nil: no
	// Landlock.
	Landlock *Landlock

	// Sent apart (EncodeCgroup) once the cgroup exists: the init stage
	// builds the rest of the root meanwhile.
	CgroupView []CgroupDir // the server's own cgroup, shown read-only at /sys/fs/cgroup
	CgroupJoin []string    // cgroup v1 tasks files the forking process joins by writing "0"
}

// Bind is one read-only or read-write grant.
type Bind struct {
	Path     string
	Writable bool
	State    bool   // the server's StateDir (writable too)
	IDMap    *IDMap // show this owner as the server (root supervisor only)
}

// Field is the setting that grants b, as messages name it (init_root.c
// names it the same way).
func (b Bind) Field() string {
	if b.State {
		return "StateDir"
	}
	if b.Writable {
		return "ReadWrite"
	}
	return "ReadOnly"
}

// IDMap is the owner a grant is mapped from.
type IDMap struct {
	UID uint32 // the owner's uid on disk; 0 when root's ownership is lent
	GID uint32 // the owner's gid on disk; 0 is mapped only with UID 0 (see init_idmap.c)
}

// CgroupDir is one directory of the server's cgroup and its place inside.
type CgroupDir struct {
	Name  string   // beneath /sys/fs/cgroup ("memory", "cpu,cpuacct"); "" = /sys/fs/cgroup itself (cgroup2)
	Links []string // names linked to Name, as hosts link cpu and cpuacct to cpu,cpuacct
	Dir   string   // the server's cgroup directory on the host
}
