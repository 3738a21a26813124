package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// Usage is how one command parses its options and reports a wrong command
// line: under its name, with the way to its manual.
type Usage struct {
	Name   string // as messages name it: "mcpsandbox run"
	Manual string // the command line that prints its manual: "mcpsandbox help run"
	Page   func() *Page
}

// FlagSet returns a FlagSet that reports errors to the caller instead of
// printing Go's default usage text.
func (u Usage) FlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet(u.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// Parse parses args. ok is false when the caller should return status at
// once: --help was printed, or a usage error was.
func (u Usage) Parse(fs *flag.FlagSet, args []string, std Stdio) (status int, ok bool) {
	err := fs.Parse(args)
	if err == nil {
		return ExitOK, true
	}
	if errors.Is(err, flag.ErrHelp) {
		u.Page().Write(std.Out)
		return ExitOK, false
	}
	return u.Fail(flagError(err, fs), std), false
}

// NoArgs rejects positional arguments for commands that take none.
func (u Usage) NoArgs(fs *flag.FlagSet, std Stdio) (int, bool) {
	if fs.NArg() > 0 {
		return u.Fail(fmt.Sprintf("unexpected argument %q: this command takes only options", fs.Arg(0)), std), false
	}
	return ExitOK, true
}

// Fail reports a bad invocation with the way to the manual.
func (u Usage) Fail(msg string, std Stdio) int {
	fmt.Fprintf(std.Err, "%s: %s\nRun '%s' for the options.\n", u.Name, msg, u.Manual)
	return ExitUsage
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
		if d := field.EditDistance(name, f.Name); d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	return best
}
