package main

import (
	"context"
	"os"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

func runCommand(args []string, std stdio) int {
	r, status, ok := runPolicy("run", args, std)
	if !ok {
		return status
	}
	p := r.Policy
	log, closeLog, err := newLogger(p.LogFile, p.LogLevel, std.Err)
	if err != nil {
		return usageFailure("run", err.Error(), std)
	}
	defer closeLog()
	logChoice(r, log)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Catching signals starts a runtime thread (a fifth of a millisecond):
	// done beside the server's start, long before the first write to the
	// host can meet a closed pipe.
	go catchSignals(cancel)

	check, prepare := r.Launch.OfflineCheck(p)
	if lockPath, err := r.LockPath(lock.DefaultPath); err == nil {
		check, prepare = r.StartCheck(lockPath) // no lock without a home: nothing is pinned
	}
	out, err := supervisor.Run(ctx, supervisor.Options{
		Name:          r.Launch.Name,
		Policy:        p,
		StateDir:      r.StateDir(),
		FormerState:   r.FormerState(),
		HostIn:        std.In,
		HostOut:       std.Out,
		Log:           log,
		Setting:       flagOf,
		LookupEnv:     r.Host.LookupEnv,
		Environ:       os.Environ(),
		ReleaseMemory: supervisor.MemoryReleaser(200 * time.Millisecond),
		Prepared:      &supervisor.Prepared{Check: check, Command: prepare},
		ID:            r.Launch.ID,
	})
	if err != nil {
		log.Error("mcpsandbox stopped", "err", field.Message(err, flagOf), "reason", out.Reason)
	}
	code := exitStatus(out, err)
	log.Info("mcpsandbox: session ended; exiting", "exit_code", code, "reason", out.Reason)
	return code
}

// exitStatus is what mcpsandbox run exits with: 1 when the server could
// not be kept up (it stopped for good, or never started), 2 when nothing
// could start (the policy or the audit log is wrong), 0 after a clean end.
func exitStatus(out supervisor.Outcome, err error) int {
	switch {
	case out.Failed:
		return exitFailure
	case err != nil:
		return exitUsage
	}
	return exitOK
}
