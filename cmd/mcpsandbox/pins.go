package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/resolve"
)

// pinsCommand is `mcpsandbox pins list|diff|approve|verify [OPTIONS] [NAME]
// [ITEM...]`: the lock as a user reviews and approves it.
func pinsCommand(args []string, std stdio) int {
	fs := newFlagSet("pins")
	where := addLockFlags(fs)
	all := fs.Bool("all", false, "")
	words, status, ok := interspersed(fs, "pins", args, std)
	if !ok {
		return status
	}
	if len(words) == 0 {
		return usageFailure("pins", "say what to do: list, diff, approve or verify", std)
	}
	sub, words := words[0], words[1:]
	if *all && sub != "approve" {
		return usageFailure("pins", "--all is approve's: pins approve NAME --all", std)
	}
	var run func(p pinsRun) int
	switch sub {
	case "list":
		if len(words) > 1 {
			return usageFailure("pins", "pins list takes at most one server NAME", std)
		}
		run = pinsList
	case "diff":
		run = pinsDiff
	case "approve":
		switch {
		case len(words) == 0 && !*all:
			return usageFailure("pins", "say what to approve: NAME ITEM... (as pins diff names them), NAME --all, or --all", std)
		case len(words) == 1 && !*all:
			return usageFailure("pins", fmt.Sprintf("say which of %s's held items to approve (pins diff %s names them), or --all", words[0], words[0]), std)
		case len(words) > 1 && *all:
			return usageFailure("pins", "give ITEMs or --all, not both", std)
		}
		run = pinsApprove
	case "verify":
		if len(words) > 1 {
			return usageFailure("pins", "pins verify takes at most one server NAME", std)
		}
		run = pinsVerify
	default:
		return usageFailure("pins", fmt.Sprintf("no pins subcommand %q: use list, diff, approve or verify", sub), std)
	}
	path, pol, err := where.path()
	if err != nil {
		return usageFailure("pins", err.Error(), std)
	}
	std.Out, std.Err = visibleWriter{std.Out}, visibleWriter{std.Err}
	p := pinsRun{path: path, policy: pol, std: std}
	if def, err := lock.DefaultPath(); err != nil || def != path {
		p.lockArgs = []string{"--lock", path} // the commands it prints must find the same lock
	}
	if len(words) > 0 {
		p.name, p.items = words[0], words[1:]
	}
	return run(p)
}

// pinsRun is one pins subcommand's request.
type pinsRun struct {
	path     string   // the lock
	lockArgs []string // --lock PATH when it is not the default one
	name     string   // NAME, "" for every server
	items    []string // ITEMs as given
	std      stdio

	policy *policy.Policy // --policy's, for the scanner's egress allowlist; nil: none given
}

// fail reports err: a NAME the lock does not hold or an ITEM that names no
// item is the command line's (2), anything else (a lock that does not load, an item not held) is 1.
func (p pinsRun) fail(sub string, err error) int {
	var unknown badArgument
	if errors.As(err, &unknown) {
		return usageFailure("pins", err.Error(), p.std)
	}
	fmt.Fprintf(p.std.Err, "mcpsandbox pins %s: %v\n", sub, err)
	return exitFailure
}

// interspersed parses options wherever they stand among the words, as
// `pins diff NAME --lock FILE` is written as often as the other order.
func interspersed(fs *flag.FlagSet, name string, args []string, std stdio) ([]string, int, bool) {
	var words []string
	for {
		if status, ok := parseFlags(fs, name, args, std); !ok {
			return nil, status, false
		}
		if fs.NArg() == 0 {
			return words, exitOK, true
		}
		words, args = append(words, fs.Arg(0)), fs.Args()[1:]
	}
}

// lockFlags choose the lock as the relay would for the same setting:
// --lock, else the policy's pins.lock, else the daemon config's own, else
// the user's (lock.DefaultPath: MCPSANDBOX_LOCK's first, as run reads it). The
// policy --policy names is returned too (nil: none), for the scanner.
type lockFlags struct{ lock, policy, config *string }

// addLockFlags defines --lock, --policy and --config on fs.
func addLockFlags(fs *flag.FlagSet) lockFlags {
	return lockFlags{lock: fs.String("lock", "", ""), policy: fs.String("policy", "", ""), config: fs.String("config", "", "")}
}

func (l lockFlags) path() (string, *policy.Policy, error) {
	var pol *policy.Policy
	if *l.policy != "" {
		r, err := resolve.Resolve(resolve.Request{PolicyOnly: true, Policy: *l.policy, Host: launch.FromProcess()})
		if err != nil {
			return "", nil, fmt.Errorf("--policy: %s", field.Message(err, keyOf))
		}
		pol = &r.Policy
	}
	switch {
	case *l.lock != "":
		return *l.lock, pol, nil
	case pol != nil && pol.Lock != "":
		return pol.Lock, pol, nil
	case *l.config != "":
		return lock.BesideConfig(*l.config), pol, nil
	}
	path, err := lock.DefaultPath()
	return path, pol, err
}
