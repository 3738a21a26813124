package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	sd "github.com/coreos/go-systemd/v22/daemon"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/internal/logsink"
	"github.com/mcpsandbox/mcpsandbox/launch"
)

func daemonCommand(args []string, std stdio) int {
	fs := newFlagSet("daemon")
	configFile := fs.String("config", "", "")
	socketDir := fs.String("socket-dir", "", "")
	logFile := fs.String("log-file", "", "")
	logLevel := fs.String("log-level", "info", "")
	if status, ok := parseFlags(fs, "daemon", args, std); !ok {
		return status
	}
	if status, ok := noArgs(fs, "daemon", std); !ok {
		return status
	}
	if *configFile == "" {
		return usageFailure("daemon", "give the servers to keep with --config FILE (a Claude Desktop, Cursor or VS Code file of servers; see `mcpsandbox help daemon`)", std)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usageFailure("daemon", fmt.Sprintf("--log-level %q: use debug, info, warn or error", *logLevel), std)
	}
	// Under systemd the journal, unless a file is named; else a file.
	h, where, closeLog, err := logsink.Open(logsink.Options{Auto: *logFile == "", File: *logFile, Level: level})
	if err != nil {
		return usageFailure("daemon", "--log-file: "+err.Error(), std)
	}
	defer closeLog()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reload := make(chan struct{}, 1)
	go catchDaemonSignals(cancel, reload)
	err = daemon.Run(ctx, daemon.Options{
		Config:    *configFile,
		SocketDir: *socketDir,
		Log:       h,
		LookupEnv: os.LookupEnv,
		Environ:   os.Environ(),
		Host:      launch.FromProcess(),
		Reload:    reload,
		Ready: func(socket string) {
			fmt.Fprintf(std.Err, "mcpsandbox daemon: listening on %s; logging to %s\n", socket, where)
			sd.SdNotify(false, sd.SdNotifyReady) // a Type=notify service is up
		},
	})
	if err != nil {
		fmt.Fprintf(std.Err, "mcpsandbox daemon: %v\n", err)
		var ce *daemon.ConfigError
		if errors.As(err, &ce) {
			return exitUsage
		}
		return exitFailure
	}
	return exitOK
}

func daemonPage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox daemon - keep the servers of a config up for many hosts",
		Synopsis: []string{"mcpsandbox daemon --config FILE [--socket-dir DIR] [--log-file FILE]"},
		Description: []string{
			"Runs until stopped, keeping the servers FILE names available to MCP hosts, which reach them with `mcpsandbox connect NAME` in place of the server's command. FILE is a Claude Desktop or Cursor file (`mcpServers`) or a VS Code one (`servers`), with mcpsandbox's keys beside each entry (policy, prestart, max-instances, users; docs/daemon.md). Each server is resolved exactly as `mcpsandbox run -- COMMAND` resolves the same launch line, and every host session gets an instance of its own, confined and supervised as run supervises one: heartbeat, restart, MCP rules, audit and egress. An instance ends when its host leaves. A config whose entries do not resolve is refused at start, at file:line:col.",
			"prestart N keeps N instances warm (started, answering, no host yet), so a host attaching does not wait for the server's start; max-instances bounds a server's instances, warm ones included, and a host over it gets the error \"server unavailable\" saying so.",
			"The daemon listens on one socket, daemon.sock: a user's in $XDG_RUNTIME_DIR/mcpsandbox (a directory only that user may enter), root's in /run/mcpsandbox, which every user may reach. On each connection it asks the kernel for the client's uid and lets it use a server only if the server's users allow it (by default the daemon's own user only). status, restart, logs and reload talk to it over the same socket; they are for the daemon's own user and root.",
			"SIGHUP (or `mcpsandbox reload`) reads FILE again: a server whose resolved policy did not change keeps its instances and their sessions; a changed one's instances are stopped and new ones get the new settings; a config with an error is refused and the running one stays. SIGTERM or SIGINT shuts every instance down, answering requests in flight, and removes the socket.",
			"Under systemd the log goes to the journal, with fields SERVER and INSTANCE; elsewhere to a file rotated at 10 MiB (5 kept): /var/log/mcpsandbox/daemon.log for root, else $XDG_STATE_HOME/mcpsandbox/daemon.log. `mcpsandbox logs NAME` shows a server's last records either way.",
		},
		Options: []cmdline.Option{
			{Flag: "--config FILE", Text: "The servers to keep (required)."},
			{Flag: "--socket-dir DIR", Text: "Listen in DIR instead: made if missing, 0700 (root's 0755, with a socket every user may reach, as /run/mcpsandbox); an existing one must be yours and writable by nobody else. Clients then need the same --socket-dir."},
			{Flag: "--log-file FILE", Text: "Log to FILE, rotated, even under systemd."},
			{Flag: "--log-level LEVEL", Text: "debug, info, warn or error. Default: info."},
			helpOption,
		},
		ExitStatus: []string{
			"0 after a shutdown by signal.",
			"1 when it cannot listen (another daemon runs in the directory: the message names its pid).",
			"2 when the command line or the config is wrong; the message says where (file:line:col) and how to fix it.",
		},
		Examples: []cmdline.Example{
			{Command: "mcpsandbox daemon --config ~/.config/mcpsandbox/daemon.json", Text: "Keep the servers of a Claude Desktop style file up (a host then runs `mcpsandbox connect NAME`):"},
		},
	}
}
