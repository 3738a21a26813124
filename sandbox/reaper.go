package sandbox

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// forwardedSignals reach the server; PID 1 would otherwise drop them, since
// the kernel gives a namespace's init no default signal actions.
var forwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGWINCH, syscall.SIGCONT}

// reap starts the server, reports whether its exec succeeded,
// then stays as PID 1: it forwards signals, reaps orphans, and reports the
// server's end before exiting (which ends every other process inside).
// sigs receives forwardedSignals (see notifyForwarded).
func reap(cfg *initConfig, rep reportWriter, sigs <-chan os.Signal) int {
	pid, err := spawnServer(cfg)
	if err != nil {
		rep.send(report{Error: err.Error()})
		return 1
	}
	rep.send(report{Started: true})

	exited := make(chan syscall.WaitStatus, 1)
	go reapChildren(pid, exited)
	for {
		select {
		case sig := <-sigs:
			if err := unix.Kill(pid, sig.(syscall.Signal)); err != nil && err != unix.ESRCH {
				fmt.Fprintf(os.Stderr, "mcpsandbox-init: forwarding %v: %v\n", sig, err)
			}
		case ws := <-exited:
			r := exitStatus(ws)
			rep.send(r)
			if r.Signal != 0 {
				return 128 + r.Signal
			}
			return r.Code
		}
	}
}

// notifyForwarded starts catching forwardedSignals; a signal that arrives
// before the server runs reaches it once it does. The first Notify starts
// the runtime's signal thread (most of a millisecond), so the init stage
// calls it while it sets up.
func notifyForwarded() chan os.Signal {
	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs, forwardedSignals...)
	return sigs
}

// reapChildren waits for every child, orphans included, and hands over the
// server's status when it ends.
func reapChildren(server int, exited chan<- syscall.WaitStatus) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			// No children left without having seen the server: cannot happen,
			// but never leave the reaper waiting forever.
			exited <- syscall.WaitStatus(127 << 8)
			return
		}
		if pid == server {
			exited <- ws
			return
		}
	}
}
