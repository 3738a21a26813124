package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
)

func connectCommand(args []string, std stdio) int {
	fs := newFlagSet("connect")
	sockets := socketFlags(fs)
	name, status, ok := oneName("connect", fs, args, std)
	if !ok {
		return status
	}
	socks, err := sockets()
	if err != nil {
		return usageFailure("connect", err.Error(), std)
	}
	// A host that goes away ends the bridge through a failed write, not
	// SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	c, refusal := daemon.ConnectTo(socks, name)
	if refusal != nil {
		fmt.Fprintf(std.Err, "mcpsandbox connect %s: %s: %s\n", name, refusal.Message, refusal.Reason)
		daemon.Unavailable(std.In, std.Out, refusal)
		return exitFailure
	}
	daemon.Bridge(c, std.In, std.Out)
	return exitOK
}

// socketFlags adds --socket-dir and --system to fs; the function it
// returns gives the sockets to try, in turn.
func socketFlags(fs *flag.FlagSet) func() ([]string, error) {
	dir := fs.String("socket-dir", "", "")
	system := fs.Bool("system", false, "")
	return func() ([]string, error) {
		switch {
		case *dir != "" && *system:
			return nil, fmt.Errorf("give --socket-dir or --system, not both")
		case *dir != "":
			return []string{filepath.Join(*dir, daemon.SocketName)}, nil
		case *system:
			return []string{filepath.Join(daemon.SystemSocketDir, daemon.SocketName)}, nil
		}
		return daemon.ClientSockets(os.LookupEnv), nil
	}
}

// oneName parses a command line of one NAME and options, before or after
// it.
func oneName(cmd string, fs *flag.FlagSet, args []string, std stdio) (string, int, bool) {
	if status, ok := parseFlags(fs, cmd, args, std); !ok {
		return "", status, false
	}
	if fs.NArg() == 0 {
		return "", usageFailure(cmd, "give the server's name, as the daemon's config names it", std), false
	}
	name := fs.Arg(0)
	if status, ok := parseFlags(fs, cmd, fs.Args()[1:], std); !ok {
		return "", status, false
	}
	if fs.NArg() > 0 {
		return "", usageFailure(cmd, fmt.Sprintf("unexpected argument %q: give one server name", fs.Arg(0)), std), false
	}
	return name, exitOK, true
}

var socketOptions = []cmdline.Option{
	{Flag: "--socket-dir DIR", Text: "Talk to the daemon listening in DIR (its --socket-dir)."},
	{Flag: "--system", Text: "Talk to the system daemon (root's, /run/mcpsandbox) only. Default: the user daemon's socket in $XDG_RUNTIME_DIR/mcpsandbox, then the system daemon's."},
	helpOption,
}

var helpOption = cmdline.Option{Flag: "--help, -h", Text: "Print this page."}

func connectPage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox connect - attach a host to a server the daemon keeps",
		Synopsis: []string{"mcpsandbox connect NAME [--socket-dir DIR | --system]"},
		Description: []string{
			"What an MCP host is configured with in place of a server's command, for a server that `mcpsandbox daemon` keeps: it bridges the host's stdio to an instance of its own of the server NAME (a warm one when the server has prestart), over the daemon's socket. The instance is confined and supervised by the daemon as `mcpsandbox run` would: a crash or a restart is as invisible to the host as under run. It ends when the host leaves.",
			"It tries the user daemon's socket, then the system daemon's; a daemon without a server NAME passes on to the next. When no daemon has it, or the daemon refuses (the host's uid is not among the server's users, the server is at its max-instances), connect stays up and answers every request of the host with the error -31111 \"server unavailable\", its data.reason saying why and how to fix it (for no daemon: `mcpsandbox daemon --config FILE`), until the host leaves; the reason is also written to standard error, which hosts log.",
		},
		Options: socketOptions,
		ExitStatus: []string{
			"0 when the host's session with the instance ended.",
			"1 when no instance could be had: every request got \"server unavailable\".",
			"2 when the command line is wrong.",
		},
		Examples: []cmdline.Example{
			{Command: "mcpsandbox connect notes", Text: "What a host runs (command mcpsandbox, args connect and notes) for the daemon's server notes:"},
		},
	}
}
