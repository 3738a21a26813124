//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// tryMount mounts and, if that worked, unmounts at once.
func tryMount(at *attempts, what, source, target, fstype string, flags uintptr, data string) {
	err := unix.Mount(source, target, fstype, flags, data)
	if err == nil {
		unix.Unmount(target, unix.MNT_DETACH)
	}
	at.denied(what, err)
}

func probeMount(a *Args, at *attempts) {
	dir, err := scratchDir("mnt")
	if err != nil {
		at.note("%v; mounting on /proc instead", err)
		dir = "/proc"
	}
	tryMount(at, "mount tmpfs", "tmpfs", dir, "tmpfs", 0, "size=1m")
	tryMount(at, "bind-mount /", "/", dir, "", unix.MS_BIND, "")
	tryMount(at, "mount proc", "proc", dir, "proc", 0, "")
	fd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err == nil {
		unix.Close(fd)
	}
	at.denied("fsopen(tmpfs)", err)
	fd, err = unix.OpenTree(unix.AT_FDCWD, "/", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err == nil {
		unix.Close(fd)
	}
	at.denied("open_tree(/, OPEN_TREE_CLONE)", err)
	// Not a mount point: a privileged caller gets EINVAL, nothing unmounts.
	at.denied("umount2(scratch dir)", unix.Unmount(dir, 0))
}

// spawnInNamespaces starts a child that exits at once, with clone flags.
func spawnInNamespaces(flags uintptr) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, modeNoop)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags}
	return cmd.Run()
}

var nsFlags = []struct {
	name string
	flag uintptr
}{
	{"CLONE_NEWNS", unix.CLONE_NEWNS},
	{"CLONE_NEWPID", unix.CLONE_NEWPID},
	{"CLONE_NEWNET", unix.CLONE_NEWNET},
	{"CLONE_NEWUTS", unix.CLONE_NEWUTS},
	{"CLONE_NEWIPC", unix.CLONE_NEWIPC},
	{"CLONE_NEWCGROUP", unix.CLONE_NEWCGROUP},
	{"CLONE_NEWTIME", unix.CLONE_NEWTIME},
}

// probeUserNamespaces: a nested user namespace hands out every capability
// over new namespaces, the start of most kernel exploits from containers.
func probeUserNamespaces(a *Args, at *attempts) {
	at.denied("clone(CLONE_NEWUSER)", spawnInNamespaces(unix.CLONE_NEWUSER))
	at.denied("clone(CLONE_NEWUSER|CLONE_NEWNS)", spawnInNamespaces(unix.CLONE_NEWUSER|unix.CLONE_NEWNS))
	// A multi-threaded process gets EINVAL from the kernel itself, so
	// anything but EPERM means the filter let unshare(CLONE_NEWUSER) by.
	onLockedThread(func() { at.denied("unshare(CLONE_NEWUSER)", unix.Unshare(unix.CLONE_NEWUSER)) })
	// clone3 passes its flags in memory a filter cannot read, so it must
	// fail with ENOSYS (libc then falls back to clone). With a zero size
	// the kernel itself would answer EINVAL.
	_, _, errno := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)
	if errno == unix.ENOSYS {
		at.note("clone3: ENOSYS")
	} else {
		at.got("clone3 reached the kernel: %s", errText(errno))
	}
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil {
		at.note("max_user_namespaces %s", string(b[:len(b)-1]))
	}
}

func probeOtherNamespaces(a *Args, at *attempts) {
	for _, ns := range nsFlags {
		at.denied("clone("+ns.name+")", spawnInNamespaces(ns.flag))
	}
	for _, ns := range nsFlags {
		if ns.flag == unix.CLONE_NEWPID || ns.flag == unix.CLONE_NEWTIME {
			continue // they take effect for children only; covered above
		}
		onLockedThread(func() { at.denied("unshare("+ns.name+")", unix.Unshare(int(ns.flag))) })
	}
}

func probeSetns(a *Args, at *attempts) {
	for _, ns := range []struct {
		file string
		flag int
	}{{"net", unix.CLONE_NEWNET}, {"mnt", unix.CLONE_NEWNS}, {"uts", unix.CLONE_NEWUTS}, {"ipc", unix.CLONE_NEWIPC}, {"user", unix.CLONE_NEWUSER}} {
		for _, pid := range []string{"self", "1"} {
			p := fmt.Sprintf("/proc/%s/ns/%s", pid, ns.file)
			fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				at.note("open %s: %s", p, errText(err))
				continue
			}
			onLockedThread(func() {
				err := unix.Setns(fd, ns.flag)
				// EINVAL for one's own user namespace is the kernel
				// refusing a no-op: it still shows setns is not filtered.
				at.denied("setns("+p+")", err)
			})
			unix.Close(fd)
		}
	}
}

func probePivotRootChroot(a *Args, at *attempts) {
	at.denied("pivot_root(nonexistent)", unix.PivotRoot("/nonexistent-hostile-a", "/nonexistent-hostile-b"))
	// chroot("/") changes nothing even if allowed.
	at.denied(`chroot("/")`, unix.Chroot("/"))
}
