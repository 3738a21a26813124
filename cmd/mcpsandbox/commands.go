package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit statuses shared by every command.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

type stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

type command struct {
	Name   string
	Hidden bool // not listed by `mcpsandbox help`, still documented
	Page   func() *manPage
	Run    func(args []string, std stdio) int
}

// commands is filled in init to break the cycle help → commands → help.
var commands []command

func init() {
	commands = []command{
		{Name: "run", Page: runPage, Run: runCommand},
		{Name: "demo", Page: demoPage, Run: demoCommand},
		{Name: "doctor", Page: doctorPage, Run: doctorCommand},
		{Name: "version", Page: versionPage, Run: versionCommand},
		{Name: "help", Page: helpPage, Run: helpCommand},
		{Name: "example-server", Hidden: true, Page: exampleServerPage, Run: exampleServerCommand},
	}
}

func findCommand(name string) *command {
	for i := range commands {
		if commands[i].Name == name {
			return &commands[i]
		}
	}
	return nil
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
	return fmt.Sprintf("usage: mcpsandbox COMMAND [OPTIONS]\ncommands: %s\nRun 'mcpsandbox help COMMAND' for a command's manual.\n",
		strings.Join(names, ", "))
}

// newFlagSet returns a FlagSet that reports errors to the caller instead of
// printing Go's default usage text.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("mcpsandbox "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args for the named command. ok is false when the caller
// should return status at once: --help was printed, or a usage error was.
func parseFlags(fs *flag.FlagSet, name string, args []string, std stdio) (status int, ok bool) {
	err := fs.Parse(args)
	if err == nil {
		return exitOK, true
	}
	if errors.Is(err, flag.ErrHelp) {
		findCommand(name).Page().write(std.Out)
		return exitOK, false
	}
	return usageFailure(name, flagError(err, fs), std), false
}

// usageFailure reports a bad invocation with the way to the manual.
func usageFailure(name, msg string, std stdio) int {
	fmt.Fprintf(std.Err, "mcpsandbox %s: %s\nRun 'mcpsandbox help %s' for the options.\n", name, msg, name)
	return exitUsage
}

// flagError rewrites the flag package's messages in the manual's terms
// (double dashes) and suggests the option that was probably meant.
func flagError(err error, fs *flag.FlagSet) string {
	msg := err.Error()
	if bad, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		bad = strings.TrimPrefix(bad, "-")
		msg = "unknown option --" + bad
		if guess := closestFlag(fs, bad); guess != "" {
			msg += "; did you mean --" + guess + "?"
		}
		return msg
	}
	if flagName, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "option --" + strings.TrimPrefix(flagName, "-") + " needs a value"
	}
	return strings.Replace(msg, "for flag -", "for option --", 1)
}

// closestFlag returns the option of fs within two edits of name, if any.
func closestFlag(fs *flag.FlagSet, name string) string {
	best, bestDist := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// noArgs rejects positional arguments for commands that take none.
func noArgs(fs *flag.FlagSet, name string, std stdio) (int, bool) {
	if fs.NArg() > 0 {
		return usageFailure(name, fmt.Sprintf("unexpected argument %q: this command takes only options", fs.Arg(0)), std), false
	}
	return exitOK, true
}
