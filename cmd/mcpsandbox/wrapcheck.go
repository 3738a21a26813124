package main

import (
	"errors"
	"io"
	"os"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// wrap checks each entry as its run will start it before it changes the
// entry, and --dry-run checks the same: both refuse the same entries, for
// the same reason. What the dry run leaves out is the prepare step, which
// fetches.

// entryHost is this machine as the entry's server is started on it: the
// host gives it the entry's env over its own environment. Wrap prepares
// in this process, so the values reach prepare through this lookup and
// never a command line (ps would show one).
func entryHost(values map[string]string) launch.Host {
	h := launch.FromProcess()
	h.LookupEnv = func(name string) (string, bool) {
		if v, ok := values[name]; ok {
			return v, true
		}
		return os.LookupEnv(name)
	}
	return h
}

// checkEntry resolves the policy of the launch line as `mcpsandbox run
// --env NAME... -- LAUNCH` will, and checks its grants as the sandbox will
// at the start; the error is what run would say.
func checkEntry(env, launchLine []string, host launch.Host) error {
	var errs strings.Builder
	r, _, ok := runPolicyOn("run", runArgs(env, launchLine), host, stdio{In: strings.NewReader(""), Out: io.Discard, Err: &errs})
	if !ok {
		first, _, _ := strings.Cut(errs.String(), "\n")
		_, msg, _ := strings.Cut(first, ": ")
		return errors.New(msg)
	}
	if r.Policy.Unconfined {
		return nil
	}
	if err := sandbox.CheckGrants(specOf(r)); err != nil {
		return errors.New("the server could not start: " + field.Message(err, flagOf))
	}
	return nil
}
