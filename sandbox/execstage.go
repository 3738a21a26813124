package sandbox

import (
	"fmt"
	"math"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// runExec is the exec stage: the last of our code before the server. It
// runs the per-process steps in an order where each still has the rights it
// needs, loads seccomp last, and execs. Failures go to the reaper as text.
func runExec() int {
	errs := os.NewFile(reportFD, "exec-errors")
	unix.CloseOnExec(reportFD)
	cfg, err := readConfig()
	if err == nil {
		err = prepareExec(cfg)
	}
	if err == nil {
		err = syscall.Exec(cfg.Exe, cfg.Args, cfg.Env)
		err = execError(cfg, err)
	}
	fmt.Fprintln(errs, err)
	return 127
}

func execError(cfg *initConfig, err error) error {
	switch err {
	case syscall.EACCES:
		return fmt.Errorf("exec %s: permission denied: the sandbox user (uid %d) must be able to read and execute it", cfg.Exe, cfg.UID)
	case syscall.ENOENT:
		return fmt.Errorf("exec %s: no such file: if it is a script, grant its interpreter's directory with --ro", cfg.Exe)
	}
	return fmt.Errorf("exec %s: %v", cfg.Exe, err)
}

func prepareExec(cfg *initConfig) error {
	unix.Umask(0o022)
	if err := setRlimits(cfg); err != nil {
		return err
	}
	if err := dropPrivileges(cfg); err != nil {
		return err
	}
	if err := os.Chdir(cfg.Dir); err != nil {
		return fmt.Errorf("working directory %s: %v: it must be accessible to the sandbox user (uid %d)", cfg.Dir, err, cfg.UID)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %v", err)
	}
	// Credential changes clear the parent-death signal: arm it again, then
	// make sure the reaper did not die in between.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("parent-death signal: %v", err)
	}
	if os.Getppid() != 1 {
		return fmt.Errorf("the sandbox's reaper is gone")
	}
	// Close-on-exec rather than close: the Go runtime still owns some of
	// these descriptors until exec.
	if err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("closing inherited descriptors: close_range: %v (Linux 5.11+ needed)", err)
	}
	if len(cfg.Seccomp) > 0 {
		if err := loadSeccomp(cfg.Seccomp); err != nil {
			return fmt.Errorf("loading seccomp: %v", err)
		}
	}
	return nil
}

// setRlimits sets RLIMIT_CORE 0 (no core files with secrets in them) and
// RLIMIT_NOFILE. syscall.Setrlimit also stops Go from restoring its own
// NOFILE soft limit at exec.
func setRlimits(cfg *initConfig) error {
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{}); err != nil {
		return fmt.Errorf("RLIMIT_CORE: %v", err)
	}
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &cur); err != nil {
		return fmt.Errorf("RLIMIT_NOFILE: %v", err)
	}
	if cfg.UserNS && cfg.NoFile > cur.Max {
		return fmt.Errorf("--nofile %d exceeds the hard limit %d mcpsandbox runs with: lower --nofile or raise the hard limit (ulimit -Hn)", cfg.NoFile, cur.Max)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: cfg.NoFile, Max: cfg.NoFile}); err != nil {
		return fmt.Errorf("--nofile %d: %v (the kernel's fs.nr_open is the ceiling)", cfg.NoFile, err)
	}
	return nil
}
