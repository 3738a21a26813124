package sandbox

/*
#include <stdlib.h>
#include "spawn.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"syscall"
	"unsafe"
)

// spawnServer forks the server from the reaper (spawn.c does the
// per-process steps in the child) and returns once its exec succeeded: the
// error pipe is close-on-exec, so EOF without a report means it is running.
func spawnServer(cfg *initConfig) (int, error) {
	if err := checkNoFile(cfg); err != nil {
		return 0, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer errR.Close()

	var cstrs []unsafe.Pointer
	cstr := func(s string) *C.char {
		p := C.CString(s)
		cstrs = append(cstrs, unsafe.Pointer(p))
		return p
	}
	cvec := func(ss []string) **C.char {
		vec := (**C.char)(C.calloc(C.size_t(len(ss)+1), C.size_t(unsafe.Sizeof(uintptr(0)))))
		cstrs = append(cstrs, unsafe.Pointer(vec))
		elems := unsafe.Slice(vec, len(ss)+1)
		for i, s := range ss {
			elems[i] = cstr(s)
		}
		return vec
	}
	defer func() {
		for _, p := range cstrs {
			C.free(p)
		}
	}()
	args := C.struct_spawn_args{
		path:   cstr(cfg.Exe),
		argv:   cvec(cfg.Args),
		envp:   cvec(cfg.Env),
		dir:    cstr(cfg.Dir),
		uid:    C.uint32_t(cfg.UID),
		gid:    C.uint32_t(cfg.GID),
		nofile: C.uint64_t(cfg.NoFile),
		reaper: C.pid_t(os.Getpid()),
	}
	if cfg.UserNS {
		args.userns = 1
	}
	if len(cfg.Seccomp) > 0 {
		if len(cfg.Seccomp)%8 != 0 || len(cfg.Seccomp)/8 > 4096 {
			return 0, fmt.Errorf("seccomp: BPF program of %d bytes is not 1..4096 instructions of 8 bytes", len(cfg.Seccomp))
		}
		prog := C.CBytes(cfg.Seccomp)
		cstrs = append(cstrs, prog)
		args.seccomp = prog
		args.seccomp_len = C.uint32_t(len(cfg.Seccomp) / 8)
	}
	// Runs on the init stage's locked main thread, whose cgroup namespace
	// the child inherits (see setupSandbox).
	pid := int(C.mcpsandbox_spawn(&args, C.int(errW.Fd())))
	errW.Close()
	if pid < 0 {
		return 0, fmt.Errorf("starting the server: fork: %v", syscall.Errno(-pid))
	}
	var msg [8]byte
	if _, err := io.ReadFull(errR, msg[:]); err != nil {
		return pid, nil // EOF: exec succeeded
	}
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
	step := int32(binary.NativeEndian.Uint32(msg[0:4]))
	errno := syscall.Errno(binary.NativeEndian.Uint32(msg[4:8]))
	return 0, spawnError(cfg, step, errno)
}

// checkNoFile refuses a NOFILE limit a user namespace cannot grant.
func checkNoFile(cfg *initConfig) error {
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &cur); err != nil {
		return fmt.Errorf("RLIMIT_NOFILE: %v", err)
	}
	if cfg.UserNS && cfg.NoFile > cur.Max {
		return fmt.Errorf("--nofile %d exceeds the hard limit %d mcpsandbox runs with: lower --nofile or raise the hard limit (ulimit -Hn)", cfg.NoFile, cur.Max)
	}
	return nil
}

// spawnError turns the child's {step, errno} into a message naming the fix.
func spawnError(cfg *initConfig, step int32, errno syscall.Errno) error {
	switch step {
	case C.SPAWN_RLIMIT_NOFILE:
		return fmt.Errorf("--nofile %d: %v (the kernel's fs.nr_open is the ceiling)", cfg.NoFile, errno)
	case C.SPAWN_SETGROUPS, C.SPAWN_SETGID, C.SPAWN_SETUID:
		return fmt.Errorf("switching to the sandbox user (uid %d, gid %d): %v", cfg.UID, cfg.GID, errno)
	case C.SPAWN_STILL_ROOT:
		return fmt.Errorf("still uid 0 after the credential change: refusing to run the server as root")
	case C.SPAWN_CHDIR:
		return fmt.Errorf("working directory %s: %v: it must be accessible to the sandbox user (uid %d)", cfg.Dir, errno, cfg.UID)
	case C.SPAWN_REAPER_GONE:
		return fmt.Errorf("the sandbox's reaper is gone")
	case C.SPAWN_CLOSE_RANGE:
		return fmt.Errorf("closing inherited descriptors: close_range: %v (Linux 5.11+ needed)", errno)
	case C.SPAWN_SECCOMP:
		if errno == syscall.EINVAL {
			return fmt.Errorf("loading seccomp: the kernel rejected the filter (EINVAL): it needs CONFIG_SECCOMP_FILTER")
		}
		return fmt.Errorf("loading seccomp: %v", errno)
	case C.SPAWN_EXEC:
		return execError(cfg, errno)
	}
	steps := map[int32]string{C.SPAWN_SETSID: "setsid", C.SPAWN_RLIMIT_CORE: "RLIMIT_CORE",
		C.SPAWN_CAPBSET: "emptying the capability bounding set", C.SPAWN_AMBIENT: "clearing ambient capabilities",
		C.SPAWN_CAPSET: "clearing capabilities", C.SPAWN_NO_NEW_PRIVS: "no_new_privs", C.SPAWN_PDEATHSIG: "parent-death signal"}
	return fmt.Errorf("preparing the server process: %s: %v", steps[step], errno)
}

func execError(cfg *initConfig, err syscall.Errno) error {
	switch err {
	case syscall.EACCES:
		return fmt.Errorf("exec %s: permission denied: the sandbox user (uid %d) must be able to read and execute it", cfg.Exe, cfg.UID)
	case syscall.ENOENT:
		return fmt.Errorf("exec %s: no such file: if it is a script, grant its interpreter's directory with --ro", cfg.Exe)
	}
	return fmt.Errorf("exec %s: %v", cfg.Exe, err)
}
