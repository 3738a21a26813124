package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// runInit is the init stage: PID 1 of the server's new namespaces. It builds
// the sandbox, starts the exec stage, and stays as the reaper. Errors go to
// the supervisor as a report, never only as an exit code.
func runInit(pre *preparedRoot) int {
	rep := reportWriter{os.NewFile(reportFD, "report")}
	// Nothing else may inherit the report pipe; the exec stage gets its own.
	unix.CloseOnExec(reportFD)
	// Keep the server (same uid when unprivileged) from opening this
	// process's /proc entries, /proc/1/exe above all.
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)

	// Catching signals starts a runtime thread: let that overlap the setup.
	sigsReady := make(chan chan os.Signal, 1)
	go func() { sigsReady <- notifyForwarded() }()
	// What needs no configuration is built while the supervisor creates the
	// cgroup and sends the configuration.
	if pre == nil {
		pre = prepareRoot()
	}
	var msgs configReader
	cfg, err := msgs.readConfig()
	if err != nil {
		rep.send(report{Error: err.Error()})
		return 1
	}
	if err := setupSandbox(cfg, pre, func() error { return msgs.readCgroup(cfg) }); err != nil {
		rep.send(report{Error: err.Error()})
		return 1
	}
	return reap(cfg, rep, <-sigsReady)
}

// setupSandbox builds the namespaces' contents in DESIGN §2 order.
// readCgroup waits for the cgroup part of cfg: most of the root is built
// while the supervisor still creates the cgroup.
func setupSandbox(cfg *initConfig, pre *preparedRoot, readCgroup func() error) error {
	enterCgroup := func() error {
		if err := readCgroup(); err != nil {
			return err
		}
		if err := joinCgroup(cfg.CgroupJoin); err != nil {
			return err
		}
		// Now that this thread sits in the server's cgroup, make that the
		// root of a new cgroup namespace. Only this thread changes; it is
		// the one that forks.
		if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
			return fmt.Errorf("cgroup namespace: %v: the kernel needs CONFIG_CGROUPS with cgroup namespaces (4.6+)", err)
		}
		return nil
	}
	if !cfg.NetHost {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("network namespace: bringing up lo: %v", err)
		}
	}
	if err := unix.Sethostname([]byte(sandboxHostname)); err != nil {
		return fmt.Errorf("setting the hostname: %v", err)
	}
	if err := unix.Setdomainname([]byte("(none)")); err != nil {
		return fmt.Errorf("setting the domain name: %v", err)
	}
	if err := buildRoot(cfg, pre, enterCgroup); err != nil {
		return err
	}
	return nil
}

// joinCgroup moves this thread (not the whole process: see
// ThreadJoinFiles) into the server's cgroup v1 controllers; the server
// forked from it starts inside.
func joinCgroup(tasksFiles []string) error {
	for _, f := range tasksFiles {
		fd, err := unix.Open(f, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			_, err = unix.Write(fd, []byte("0"))
			unix.Close(fd)
		}
		if err != nil {
			return fmt.Errorf("joining the server's cgroup %s: %v", filepath.Dir(f), err)
		}
	}
	return nil
}

// exitStatus splits a wait status into a report.
func exitStatus(ws syscall.WaitStatus) report {
	if ws.Signaled() {
		return report{Exited: true, Code: -1, Signal: int(ws.Signal())}
	}
	return report{Exited: true, Code: ws.ExitStatus()}
}
