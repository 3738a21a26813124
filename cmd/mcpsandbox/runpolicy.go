package main

import (
	"flag"
	"log/slog"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/resolve"
)

// runPolicy parses a run-style command line (run's flags, --policy, --
// COMMAND) into the policy to apply, or says what is wrong with it (ok
// false: return status). The resolution itself is package resolve's, the
// one every command shares.
func runPolicy(cmdName string, args []string, std stdio) (r resolve.Resolution, status int, ok bool) {
	return runPolicyOn(cmdName, args, launch.FromProcess(), std)
}

// runPolicyOn is runPolicy for a server started on host: wrap's prepare
// reads passed variables from the host file's entry before its own
// environment, as the host will give them.
func runPolicyOn(cmdName string, args []string, host launch.Host, std stdio) (r resolve.Resolution, status int, ok bool) {
	flagged := policy.Default()
	fs := newFlagSet(cmdName)
	bindRunFlags(fs, &flagged)
	ref := fs.String("policy", "", policyUsage)
	if status, ok := parseFlags(fs, cmdName, args, std); !ok {
		return r, status, false
	}
	r, err := resolve.Resolve(resolve.Request{
		Command:   fs.Args(),
		Policy:    *ref,
		Overrides: flagged,
		Given:     givenFields(fs),
		Host:      host,
	})
	if err != nil {
		return r, usageFailure(cmdName, field.Message(err, flagOf), std), false
	}
	return r, exitOK, true
}

// givenFields are the Policy fields of the run flags fs was given.
func givenFields(fs *flag.FlagSet) []string {
	var fields []string
	fs.Visit(func(f *flag.Flag) {
		for _, rf := range runFlags {
			if rf.Name == f.Name {
				fields = append(fields, rf.Field)
			}
		}
	})
	return fields
}

// logChoice says which policy applies and why, once per run.
func logChoice(r resolve.Resolution, log *slog.Logger) {
	attrs := []any{"server", r.Launch.Name, "policy", r.Ref}
	if r.Chosen {
		attrs = append(attrs, "why", r.Launch.Choice.Why)
	} else {
		attrs = append(attrs, "why", "--policy")
	}
	if rt := r.Launch.Runtime; rt.Shim != "" {
		attrs = append(attrs, "interpreter", rt.Exe, "via", rt.Via+" shim "+rt.Shim)
	}
	log.Info("mcpsandbox: policy", attrs...)
	if err := r.Launch.RuntimeErr; err != nil {
		log.Warn("mcpsandbox: the program is started as given", "server", r.Launch.Name, "err", err)
	}
	if dropped := r.NoApprovalDropped; len(dropped) > 0 {
		log.Warn("mcpsandbox: no call waits for approval (no-approval): tiers dropped", "server", r.Launch.Name, "tiers", strings.Join(dropped, ","))
	}
}
