package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// catchSignals: the first SIGTERM, SIGINT or SIGHUP starts the supervisor's
// graceful shutdown; a second one (`timeout` sends SIGTERM to mcpsandbox and
// again to its process group) ends mcpsandbox at once, its sandboxes torn
// down first. A host that goes away must end the session through a write
// error and the graceful shutdown, not kill mcpsandbox with SIGPIPE on
// stdout. Under nohup SIGHUP stays ignored.
func catchSignals(shutdown context.CancelFunc) {
	stops := []os.Signal{syscall.SIGTERM, syscall.SIGINT}
	if !signal.Ignored(syscall.SIGHUP) {
		stops = append(stops, syscall.SIGHUP)
	}
	signal.Ignore(syscall.SIGPIPE)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stops...)
	<-sigs
	shutdown()
	exitNow(<-sigs)
}

// catchDaemonSignals: SIGHUP reloads; the first SIGTERM/SIGINT shuts the
// daemon down gracefully, a second ends it at once, its sandboxes torn
// down first.
func catchDaemonSignals(shutdown context.CancelFunc, reload chan<- struct{}) {
	signal.Ignore(syscall.SIGPIPE)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	stopping := false
	for sig := range sigs {
		switch {
		case sig == syscall.SIGHUP && !stopping:
			select {
			case reload <- struct{}{}:
			default: // one is pending already
			}
		case sig == syscall.SIGHUP:
		case stopping:
			exitNow(sig)
		default:
			stopping = true
			shutdown()
		}
	}
}

// exitNow kills every sandbox and removes its cgroup, then exits 128+N for
// signal N, the status a shell shows for a death by N. Only a death by a
// signal mcpsandbox did not catch (SIGKILL, or one before it catches them)
// leaves the killing to the kernel (each sandbox's init has a parent-death
// signal) and the emptied cgroups to the next start's sweep.
func exitNow(sig os.Signal) {
	sandbox.KillAll()
	os.Exit(128 + int(sig.(syscall.Signal)))
}
