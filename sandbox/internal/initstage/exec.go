package initstage

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// Exec starts a fresh init stage for cfg: this binary re-executed as Arg0
// in new namespaces, which its ELF constructor (zygote.c) turns into the
// init stage before any Go runtime starts. cgroupFD >= 0 (cgroup v2) starts
// it inside that cgroup. The error is exec's own, for the caller to explain.
func Exec(cfg *Config, files Files, cgroupFD int) (*exec.Cmd, error) {
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{Arg0},
		Env:         []string{},
		Stdin:       files.Stdin,
		Stdout:      files.Stdout,
		Stderr:      files.Stderr,
		ExtraFiles:  files.list()[3:],
		SysProcAttr: sysProcAttr(cfg, cgroupFD),
	}
	var err error
	onForkThread(func() { err = cmd.Start() })
	return cmd, err
}

// sysProcAttr gives the init stage the namespaces, session and parent-death
// signal it runs with, and in a user namespace its ids and capabilities.
func sysProcAttr(cfg *Config, cgroupFD int) *syscall.SysProcAttr {
	flags := uintptr(unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
	if !cfg.HostNetNS {
		flags |= unix.CLONE_NEWNET
	}
	// CLONE_NEWCGROUP is done by the init stage itself once it sits in its
	// cgroup, so that the namespace's root is the server's cgroup.
	attr := &syscall.SysProcAttr{Cloneflags: flags, Setsid: true, Pdeathsig: syscall.SIGKILL}
	if cfg.UserNS {
		attr.Cloneflags |= unix.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: int(cfg.UID), HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: int(cfg.GID), HostID: os.Getgid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		attr.AmbientCaps = initCaps()
	}
	if cgroupFD >= 0 { // cgroup v2: created before the clone
		attr.UseCgroupFD = true
		attr.CgroupFD = cgroupFD
	}
	return attr
}
