package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
)

// The control commands: each one hello to the first daemon that listens.

func statusCommand(args []string, std stdio) int {
	fs := newFlagSet("status")
	sockets := socketFlags(fs)
	asJSON := fs.Bool("json", false, "")
	if status, ok := parseFlags(fs, "status", args, std); !ok {
		return status
	}
	if status, ok := noArgs(fs, "status", std); !ok {
		return status
	}
	a, status, ok := controlAnswer("status", sockets, daemon.Hello{Control: daemon.ControlStatus}, std)
	if !ok {
		return status
	}
	if *asJSON {
		enc := json.NewEncoder(std.Out)
		enc.SetIndent("", "  ")
		enc.Encode(a.Status)
		return exitOK
	}
	writeStatus(std.Out, a.Status)
	return exitOK
}

func restartCommand(args []string, std stdio) int {
	fs := newFlagSet("restart")
	sockets := socketFlags(fs)
	name, status, ok := oneName("restart", fs, args, std)
	if !ok {
		return status
	}
	a, status, ok := controlAnswer("restart", sockets, daemon.Hello{Control: daemon.ControlRestart, Server: name}, std)
	if !ok {
		return status
	}
	if len(a.Restarted) == 0 {
		fmt.Fprintf(std.Out, "%s has no instance to restart\n", name)
	} else {
		fmt.Fprintf(std.Out, "restarted %s\n", strings.Join(a.Restarted, ", "))
	}
	return exitOK
}

func reloadCommand(args []string, std stdio) int {
	fs := newFlagSet("reload")
	sockets := socketFlags(fs)
	if status, ok := parseFlags(fs, "reload", args, std); !ok {
		return status
	}
	if status, ok := noArgs(fs, "reload", std); !ok {
		return status
	}
	a, status, ok := controlAnswer("reload", sockets, daemon.Hello{Control: daemon.ControlReload}, std)
	if !ok {
		return status
	}
	fmt.Fprintf(std.Out, "reloaded %s: %s\n", a.Reload.Config, a.Reload.Summary())
	return exitOK
}

func logsCommand(args []string, std stdio) int {
	fs := newFlagSet("logs")
	sockets := socketFlags(fs)
	follow := fs.Bool("f", false, "")
	fs.BoolVar(follow, "follow", false, "")
	name, status, ok := oneName("logs", fs, args, std)
	if !ok {
		return status
	}
	socks, err := sockets()
	if err != nil {
		return usageFailure("logs", err.Error(), std)
	}
	c, status, ok := controlDial("logs", socks, daemon.Hello{Control: daemon.ControlLogs, Server: name, Follow: *follow}, std)
	if !ok {
		return status
	}
	defer c.Close()
	io.Copy(std.Out, c)
	return exitOK
}

// controlAnswer sends h to the first daemon listening and returns its
// answer, or reports why there is none (ok false).
func controlAnswer(cmd string, sockets func() ([]string, error), h daemon.Hello, std stdio) (daemon.Answer, int, bool) {
	socks, err := sockets()
	if err != nil {
		return daemon.Answer{}, usageFailure(cmd, err.Error(), std), false
	}
	var a daemon.Answer
	c, status, ok := controlDialAnswer(cmd, socks, h, std, &a)
	if ok {
		c.Close()
	}
	return a, status, ok
}

func controlDial(cmd string, socks []string, h daemon.Hello, std stdio) (*daemon.Conn, int, bool) {
	var a daemon.Answer
	return controlDialAnswer(cmd, socks, h, std, &a)
}

func controlDialAnswer(cmd string, socks []string, h daemon.Hello, std stdio, a *daemon.Answer) (*daemon.Conn, int, bool) {
	for _, sock := range socks {
		c, answer, err := daemon.Dial(sock, h)
		var nd *daemon.NoDaemonError
		if errors.As(err, &nd) {
			continue
		}
		if err != nil {
			fmt.Fprintf(std.Err, "mcpsandbox %s: %v\n", cmd, err)
			return nil, exitFailure, false
		}
		if !answer.OK {
			fmt.Fprintf(std.Err, "mcpsandbox %s: %s\n", cmd, answer.Error.Reason)
			return nil, exitFailure, false
		}
		*a = answer
		return c, exitOK, true
	}
	fmt.Fprintf(std.Err, "mcpsandbox %s: no mcpsandbox daemon is running: nothing listens on %s. Start one with `mcpsandbox daemon --config FILE`\n", cmd, strings.Join(socks, " or "))
	return nil, exitFailure, false
}

var controlExit = []string{
	"0 when the daemon did it.",
	"1 when no daemon listens, or it refused (the message says why).",
	"2 when the command line is wrong.",
}

func statusPage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox status - show the daemon's servers and their instances",
		Synopsis: []string{"mcpsandbox status [--json] [--socket-dir DIR | --system]"},
		Description: []string{
			"Asks the running daemon for each server of its config (the policy applied and why, prestart, max-instances, who may connect) and each instance (its id NAME#N, state, pid, uptime of its current process, restarts, last heartbeat round trip, memory and pids of its cgroup, why its last process ended, and the uid of its client and since when). A readable table by default; --json prints the same as JSON, whose keys docs/daemon.md documents.",
		},
		Options:    append([]cmdline.Option{{Flag: "--json", Text: "Print JSON instead of the table."}}, socketOptions...),
		ExitStatus: controlExit,
		Examples:   []cmdline.Example{{Command: "mcpsandbox status", Text: "What the daemon runs:"}},
	}
}

func restartPage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox restart - restart every instance of a server",
		Synopsis: []string{"mcpsandbox restart NAME [--socket-dir DIR | --system]"},
		Description: []string{
			"Kills each instance's server process of NAME and starts it again as after a crash: the host's session is replayed onto the new process, so the host sees at most its requests in flight answered with -31101 (server crashed). It does not count towards max-restarts.",
		},
		Options:    socketOptions,
		ExitStatus: controlExit,
		Examples:   []cmdline.Example{{Command: "mcpsandbox restart notes", Text: "Restart the server notes (e.g. after updating its package):"}},
	}
}

func logsPage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox logs - show a server's last log records",
		Synopsis: []string{"mcpsandbox logs NAME [-f] [--socket-dir DIR | --system]"},
		Description: []string{
			"Prints the daemon's last records about server NAME (its stderr, its starts, crashes and restarts, the clients attached; each with instance=NAME#N) and its audit lines (each tools/call, prompts/get and resources/read, masked as the audit log masks them, as `audit instance=NAME#N {...}`), up to the last 1000 records or 1 MiB, wherever the daemon's log itself goes.",
		},
		Options:    append([]cmdline.Option{{Flag: "-f, --follow", Text: "Then print new records as they come, until interrupted."}}, socketOptions...),
		ExitStatus: controlExit,
		Examples:   []cmdline.Example{{Command: "mcpsandbox logs notes", Text: "What the server notes said lately:"}},
	}
}

func reloadPage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox reload - make the daemon read its config again",
		Synopsis: []string{"mcpsandbox reload [--socket-dir DIR | --system]"},
		Description: []string{
			"Same as SIGHUP to the daemon, but says what came of it: the servers unchanged (their instances and sessions kept), updated in place (users, prestart or max-instances), changed (their instances stopped; new ones get the new settings), swapped (only their launch line changed, as `mcpsandbox upgrade` writes a new version: each instance restarts on it as after a crash, its host's session kept), added and removed. A config with an error is refused at file:line:col and the running one stays.",
		},
		Options:    socketOptions,
		ExitStatus: controlExit,
		Examples:   []cmdline.Example{{Command: "mcpsandbox reload", Text: "Apply an edited config:"}},
	}
}
