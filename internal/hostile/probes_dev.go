//go:build linux

package main

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// allowedDev is the minimal /dev of DESIGN.md §2, plus the usual symlinks.
var allowedDev = map[string]bool{
	"null": true, "zero": true, "full": true, "random": true, "urandom": true, "shm": true,
	"fd": true, "stdin": true, "stdout": true, "stderr": true,
}

func probeDevNodes(a *Args, at *attempts) {
	ents, err := os.ReadDir("/dev")
	if err != nil {
		at.note("list /dev: %s", errText(err))
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if !allowedDev[e.Name()] {
			at.got("/dev/%s exists", e.Name())
		}
	}
	at.note("/dev: %s", strings.Join(names, " "))
	dir, err := scratchDir("dev")
	if err != nil {
		at.note("%v", err)
		return
	}
	for _, n := range []struct {
		name       string
		mode       uint32
		major, min uint32
	}{
		{"sda", unix.S_IFBLK | 0o600, 8, 0},
		{"mem", unix.S_IFCHR | 0o600, 1, 1},
	} {
		p := filepath.Join(dir, n.name)
		err := unix.Mknod(p, n.mode, int(unix.Mkdev(n.major, n.min)))
		if err == nil {
			os.Remove(p)
		}
		at.denied("mknod "+n.name+" in /tmp", err)
	}
	rawDevices(at)
}

// rawDevices opens raw memory, disk and port devices read-only.
func rawDevices(at *attempts) {
	for _, d := range []string{"/dev/mem", "/dev/kmem", "/dev/port", "/dev/sda", "/dev/vda", "/dev/nvme0n1", "/dev/fuse", "/dev/kvm"} {
		fd, err := unix.Open(d, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
			at.got("opened %s", d)
			continue
		}
		at.note("open %s: %s", d, errText(err))
	}
}

// probeProcSysWrites writes /proc/sys/kernel/hostname back with its own
// value and opens the rest for writing without writing.
func probeProcSysWrites(a *Args, at *attempts) {
	const hn = "/proc/sys/kernel/hostname"
	if cur, err := os.ReadFile(hn); err != nil {
		at.note("read %s: %s", hn, errText(err))
	} else if f, err := os.OpenFile(hn, os.O_WRONLY, 0); err != nil {
		at.note("open %s for writing: %s", hn, errText(err))
	} else {
		_, err := f.Write(cur)
		f.Close()
		at.try("write "+hn+" (its own value)", err)
	}
	for _, p := range []string{
		"/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sys/vm/drop_caches",
		"/proc/sys/kernel/panic", "/proc/sys/fs/binfmt_misc/register", "/proc/sys/net/ipv4/ip_forward",
	} {
		tryOpenWrite(at, p)
	}
	if m, err := readMountinfo(); err == nil {
		if mt := m.containing("/proc/sys"); mt != nil && !mt.rdonly() {
			at.got("/proc/sys is mounted read-write (%s)", mt.options)
		}
	}
}

// probeSysrqTrigger opens /proc/sysrq-trigger for writing; nothing is ever
// written to it.
func probeSysrqTrigger(a *Args, at *attempts) {
	tryOpenWrite(at, "/proc/sysrq-trigger")
}

// probeProcMasked reads the /proc files that expose kernel memory or
// host-wide timing.
func probeProcMasked(a *Args, at *attempts) {
	for _, p := range []string{"/proc/kcore", "/proc/timer_list", "/proc/sched_debug", "/proc/latency_stats"} {
		tryRead(at, p)
	}
}

// probeKallsyms: kernel addresses defeat KASLR.
func probeKallsyms(a *Args, at *attempts) {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		at.note("open /proc/kallsyms: %s", errText(err))
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() && n < 1000 {
		n++
		addr, _, _ := strings.Cut(sc.Text(), " ")
		if strings.Trim(addr, "0") != "" {
			at.got("/proc/kallsyms shows addresses: %s", sc.Text())
			return
		}
	}
	at.note("/proc/kallsyms: %d lines, all addresses zero", n)
}

// probeKernelLog reads the kernel log without consuming it.
func probeKernelLog(a *Args, at *attempts) {
	buf := make([]byte, 4096)
	n, err := unix.Klogctl(unix.SYSLOG_ACTION_READ_ALL, buf)
	if err == nil && n > 0 {
		at.got("syslog(READ_ALL) returned %d bytes", n)
	} else {
		at.denied("syslog(READ_ALL)", err)
	}
	for _, p := range []string{"/dev/kmsg", "/proc/kmsg"} {
		// Opening does not consume; nothing is read.
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
			at.got("opened %s", p)
			continue
		}
		at.note("open %s: %s", p, errText(err))
	}
}

// probeIPCHost looks for the host's System V segment and /dev/shm file.
func probeIPCHost(a *Args, at *attempts) {
	if a.ShmKey != 0 {
		id, _, errno := unix.Syscall(unix.SYS_SHMGET, uintptr(a.ShmKey), 0, 0)
		if errno == 0 {
			at.got("host shm key %#x found (id %d)", a.ShmKey, id)
		} else {
			at.note("shmget(host key): %s", errText(errno))
		}
	}
	if a.DevShmFile != "" {
		tryRead(at, a.DevShmFile)
	}
	if ents, err := os.ReadDir("/dev/shm"); err == nil {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		at.note("/dev/shm: %s", strings.Join(names, " "))
	}
}
