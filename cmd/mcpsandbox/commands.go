package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
)

// Short names for what every command here uses.
type stdio = cmdline.Stdio

const (
	exitOK      = cmdline.ExitOK
	exitFailure = cmdline.ExitFailure
	exitUsage   = cmdline.ExitUsage
)

type command struct {
	Name   string
	Hidden bool // not listed by `mcpsandbox help`, still documented
	Page   func() *cmdline.Page
	Run    func(args []string, std stdio) int
}

// commands is filled in init to break the cycle help → commands → help.
var commands []command

func init() {
	commands = []command{
		{Name: "run", Page: runPage, Run: runCommand},
		{Name: "prepare", Page: preparePage, Run: prepareCommand},
		{Name: "wrap", Page: wrapPage, Run: wrapCommand},
		{Name: "upgrade", Page: upgradePage, Run: upgradeCommand},
		{Name: "policy", Page: policyPage, Run: policyCommand},
		{Name: "pins", Page: pinsPage, Run: pinsCommand},
		{Name: "approve", Page: approvePage, Run: approveCommand},
		{Name: "daemon", Page: daemonPage, Run: daemonCommand},
		{Name: "connect", Page: connectPage, Run: connectCommand},
		{Name: "status", Page: statusPage, Run: statusCommand},
		{Name: "restart", Page: restartPage, Run: restartCommand},
		{Name: "logs", Page: logsPage, Run: logsCommand},
		{Name: "reload", Page: reloadPage, Run: reloadCommand},
		{Name: "service", Page: servicePage, Run: serviceCommand},
		{Name: "doctor", Page: doctorPage, Run: doctorCommand},
		{Name: "version", Page: versionPage, Run: versionCommand},
		{Name: "help", Page: helpPage, Run: helpCommand},
	}
}

// demoProgram holds the demo and its example server, kept out of this
// binary: hosts start mcpsandbox for every server, and the MCP SDK, HTTP
// and TLS the demo links would be loaded and initialised on each start.
const demoProgram = "mcpsandbox-demo"

// moved names the commands that left this binary, and where they went.
var moved = map[string]string{
	"demo":           demoProgram,
	"example-server": demoProgram + " example-server",
}

func findCommand(name string) *command {
	for i := range commands {
		if commands[i].Name == name {
			return &commands[i]
		}
	}
	return nil
}

// usage is how the named command reports a wrong command line.
func usage(name string) cmdline.Usage {
	return cmdline.Usage{Name: "mcpsandbox " + name, Manual: "mcpsandbox help " + name, Page: findCommand(name).Page}
}

func newFlagSet(name string) *flag.FlagSet { return usage(name).FlagSet() }

func parseFlags(fs *flag.FlagSet, name string, args []string, std stdio) (int, bool) {
	return usage(name).Parse(fs, args, std)
}

func noArgs(fs *flag.FlagSet, name string, std stdio) (int, bool) {
	return usage(name).NoArgs(fs, std)
}

func usageFailure(name, msg string, std stdio) int {
	return usage(name).Fail(msg, std)
}

func cli(args []string, std stdio) int {
	if len(args) == 0 {
		fmt.Fprint(std.Err, shortUsage())
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		return helpCommand(nil, std)
	case "-version", "--version":
		return versionCommand(nil, std)
	}
	cmd := findCommand(args[0])
	if cmd == nil {
		if to, ok := moved[args[0]]; ok {
			fmt.Fprintf(std.Err, "mcpsandbox: %q is a program of its own now: run '%s'\n", args[0], to)
			return exitUsage
		}
		fmt.Fprintf(std.Err, "mcpsandbox: unknown command %q\n%s", args[0], shortUsage())
		return exitUsage
	}
	return cmd.Run(args[1:], std)
}

func shortUsage() string {
	var names []string
	for _, c := range commands {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return fmt.Sprintf("usage: mcpsandbox COMMAND [OPTIONS]\ncommands: %s\nRun 'mcpsandbox help COMMAND' for a command's manual; '%s' runs the demo.\n",
		strings.Join(names, ", "), demoProgram)
}
