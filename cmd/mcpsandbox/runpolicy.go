package main

import (
	"flag"
	"log/slog"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// resolved is what run (and prepare, and policy explain) will apply.
type resolved struct {
	policy policy.Policy
	launch launch.Launch
	ref    string // the policy file or built-in applied
	chosen bool   // ref was chosen by the command, not given with --policy

	// Where the values came from, for policy explain.
	chain   []string        // ref and what it extends, in turn
	origin  policy.Origin   // fields a file set (and no flag)
	given   map[string]bool // fields a flag set
	flagged policy.Policy   // the flags' values
	loaded  policy.Policy   // before the launch line's additions (Launch.Apply)
}

// runPolicy parses a run-style command line (run's flags, --policy, --
// COMMAND) into the policy to apply, or says what is wrong with it (ok
// false: return status). Without --policy the built-in the command selects
// is applied.
func runPolicy(cmdName string, args []string, std stdio) (r resolved, status int, ok bool) {
	flagged := policy.Default()
	fs := newFlagSet(cmdName)
	bindRunFlags(fs, &flagged)
	ref := fs.String("policy", "", policyUsage)
	if status, ok := parseFlags(fs, cmdName, args, std); !ok {
		return r, status, false
	}
	flagged.Command = fs.Args()
	r.launch = launch.Read(flagged.Command, launch.BuiltinMatches(), launch.FromProcess())
	r.ref = *ref
	if r.ref == "" {
		r.ref, r.chosen = r.launch.Choice.Policy, true
	}
	r.given = map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		for _, rf := range runFlags {
			if rf.Name == f.Name {
				r.given[rf.Field] = true
			}
		}
	})
	p, origin, chain, err := withPolicyFile(r.ref, r.given, flagged, r.launch.Vars)
	r.chain, r.origin, r.flagged, r.loaded = chain, origin, flagged, p
	if err == nil && len(p.Command) > 0 {
		err = r.launch.Apply(&p)
	}
	if err != nil {
		return r, usageFailure(cmdName, field.Message(err, flagOf), std), false
	}
	r.policy = p
	return r, exitOK, true
}

// stateDir is the server's state directory when its policy turns it on.
func (r resolved) stateDir() string {
	if !r.policy.State || r.policy.Unconfined {
		return ""
	}
	return r.launch.StateDir
}

// logChoice says which policy applies and why, once per run.
func (r resolved) logChoice(log *slog.Logger) {
	attrs := []any{"server", r.launch.Name, "policy", r.ref}
	if r.chosen {
		attrs = append(attrs, "why", r.launch.Choice.Why)
	} else {
		attrs = append(attrs, "why", "--policy")
	}
	if rt := r.launch.Runtime; rt.Shim != "" {
		attrs = append(attrs, "interpreter", rt.Exe, "via", rt.Via+" shim "+rt.Shim)
	}
	log.Info("mcpsandbox: policy", attrs...)
	if err := r.launch.RuntimeErr; err != nil {
		log.Warn("mcpsandbox: the program is started as given", "server", r.launch.Name, "err", err)
	}
}
