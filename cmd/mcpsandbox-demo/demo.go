package main

import (
	"bytes"
	"context"
	"fmt"
	goio "io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/demo"
	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

var demoUsage = cmdline.Usage{Name: "mcpsandbox-demo", Manual: "mcpsandbox-demo --help", Page: demoPage}

func demoCommand(args []string, std cmdline.Stdio) int {
	fs := demoUsage.FlagSet()
	unconfined := fs.Bool("unconfined", false, "")
	verbose := fs.Bool("verbose", false, "")
	if status, ok := demoUsage.Parse(fs, args, std); !ok {
		return status
	}
	if status, ok := demoUsage.NoArgs(fs, std); !ok {
		return status
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(std.Err, "mcpsandbox-demo: cannot find this program's own path to start the example server: %v\n", err)
		return cmdline.ExitFailure
	}

	// The supervisor's log goes to stderr with --verbose; otherwise it is
	// kept and shown only if the demo fails.
	var kept lockedBuffer
	logTo := slog.NewTextHandler(&kept, &slog.HandlerOptions{Level: slog.LevelDebug})
	if *verbose {
		logTo = slog.NewTextHandler(std.Err, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	log := slog.New(logTo)
	_, err = demo.Run(ctx, demo.Options{
		ServerCommand: []string{exe, "example-server"},
		Unconfined:    *unconfined,
		Out:           std.Out,
		Supervise: func(ctx context.Context, p policy.Policy, setting field.Namer, hostIn goio.Reader, hostOut goio.Writer) (demo.Ended, error) {
			out, err := supervisor.Run(ctx, supervisor.Options{Name: "example", Policy: p, HostIn: hostIn, HostOut: hostOut, Log: log, Setting: setting, LookupEnv: os.LookupEnv, Environ: os.Environ()})
			code := 0 // as mcpsandbox run exits
			if out.Failed {
				code = 1
			}
			return demo.Ended{Reason: out.Reason, ExitCode: code}, err
		},
		ConfinementProblem: confinementProblem,
		Choose:             demo.ChooseAsRun,
	})
	if err != nil {
		fmt.Fprintf(std.Err, "\nmcpsandbox-demo FAILED: %v\n", err)
		if !*verbose && kept.Len() > 0 {
			fmt.Fprintf(std.Err, "Supervisor log:\n%s", kept.String())
		}
		return cmdline.ExitFailure
	}
	return cmdline.ExitOK
}

// lockedBuffer is a bytes.Buffer safe for the supervisor's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func demoPage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox-demo - show supervision and confinement on a bundled server",
		Synopsis: []string{"mcpsandbox-demo [--unconfined] [--verbose]", "mcpsandbox-demo example-server"},
		Description: []string{
			"Plays an MCP host: starts the bundled example server (`mcpsandbox-demo example-server`) behind the same supervisor `mcpsandbox run` uses, drives one session with the official MCP Go SDK client, and prints what happens:",
			"  0. the policy `mcpsandbox run` chooses for the server, and why; the\n     demo adds --deny-tool wipe and an audit log\n  1. the server's tools are listed, wipe hidden\n  2. a tool call is answered\n  3. wipe is called anyway: mcpsandbox refuses it (-31107), and the call\n     never reaches the server\n  4. that call's line in the audit log, its api_key masked\n  5. the server reports from inside what it sees: its uid, namespaces,\n     seccomp mode, cgroup and limits, and whether it can read a file\n     just created in your home or reach a port on the host's loopback\n  6. the server crashes in the middle of a call: the host gets one\n     error for that call, and the next call is answered by a new process\n  7. the server hangs: the heartbeat finds it, the supervisor kills and\n     restarts it, and the session carries on\n  8. a summary with the times taken",
			"The audit log is written to a fresh directory under the temporary directory and removed afterwards. The heartbeat is set short for the demo (ping every 250ms, 500ms timeout, 2 misses); `run` defaults to 15s, 5s and 3. The file planted in your home is removed afterwards.",
			"The example server runs confined by default. When this machine cannot confine it, the demo says so loudly, names what is missing and runs it unconfined; `mcpsandbox run` would refuse instead.",
		},
		Options: []cmdline.Option{
			{Flag: "--unconfined", Text: "Run the example server without confinement, to compare. Default: false."},
			{Flag: "--verbose", Text: "Write the supervisor's log (debug level) to standard error as the demo runs. Default: false; the log is then shown only if the demo fails."},
			{Flag: "--help, -h", Text: "Print this page."},
		},
		ExitStatus: []string{
			"0 when every step behaved as described.",
			"1 when a step did not; the message says which, followed by the supervisor's log.",
			"2 when the command line is wrong.",
		},
		Examples: []cmdline.Example{
			{Command: "mcpsandbox-demo", Text: "Run it:"},
			{Command: "mcpsandbox-demo --unconfined", Text: "See what the same server can do without confinement:"},
		},
	}
}
