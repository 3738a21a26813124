package main

import (
	"context"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

func runCommand(args []string, io stdio) int {
	p := policy.Default()
	fs := newFlagSet("run")
	bindRunFlags(fs, &p)
	if status, ok := parseFlags(fs, "run", args, io); !ok {
		return status
	}
	p.Command = fs.Args()
	if err := p.Validate(); err != nil {
		return usageFailure("run", err.Error(), io)
	}
	log, closeLog, err := newLogger(p.LogFile, p.LogLevel, io.Err)
	if err != nil {
		return usageFailure("run", err.Error(), io)
	}
	defer closeLog()

	// The first SIGTERM/SIGINT starts the supervisor's graceful shutdown;
	// after it, default handling returns, so a second one ends mcpsandbox at
	// once (the server dies with it through its parent-death signal).
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() { <-ctx.Done(); stop() }()
	// A host that goes away must end the session through a write error and
	// the graceful shutdown, not kill mcpsandbox with SIGPIPE on stdout.
	signal.Ignore(syscall.SIGPIPE)

	out, err := supervisor.Run(ctx, supervisor.Options{
		Name:    filepath.Base(p.Command[0]),
		Policy:  p,
		HostIn:  io.In,
		HostOut: io.Out,
		Log:     log,
	})
	if err != nil {
		log.Error("mcpsandbox stopped", "err", err, "reason", out.Reason)
		if out.ExitCode == exitOK {
			return exitFailure
		}
	}
	return out.ExitCode
}
