package cgroups

import (
	containerd "github.com/containerd/cgroups/v3"

	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

// Mount is where the cgroup filesystems are mounted: on the host (cgroup2
// itself, or one directory per v1 hierarchy) and inside the sandbox, where
// the server's own cgroup is shown. It is the init stage's (init.h), which
// needs it before any Go runs.
const Mount = initstage.CgroupMount

// JoinedAtClone reports whether a process enters a server's cgroup as it is
// cloned (cgroup v2: CLONE_INTO_CGROUP with IntoFD), so the cgroup must
// exist before the process starts. On cgroup v1 it joins afterwards
// (ThreadJoinFiles, Add), and the cgroup may be made meanwhile.
func JoinedAtClone() bool { return containerd.Mode() == containerd.Unified }
