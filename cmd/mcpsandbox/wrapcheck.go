package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/npmregistry"
	"github.com/mcpsandbox/mcpsandbox/resolve"
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
func checkEntry(env, launchLine []string, host launch.Host) (resolve.Resolution, error) {
	var errs strings.Builder
	r, _, ok := runPolicyOn("run", runArgs(env, launchLine), host, stdio{In: strings.NewReader(""), Out: io.Discard, Err: &errs})
	if !ok {
		first, _, _ := strings.Cut(errs.String(), "\n")
		_, msg, _ := strings.Cut(first, ": ")
		return r, errors.New(msg)
	}
	if r.Policy.Unconfined {
		return r, nil
	}
	if err := sandbox.CheckGrants(specOf(r)); err != nil {
		return r, errors.New("the server could not start: " + field.Message(err, flagOf))
	}
	return r, nil
}

// exactLine is the launch line r read with its npm package's floating
// spec (npx -y pkg, @latest, a range) made the exact version the registry
// resolves it to now, as prepare will; nil for a line that names one
// exactly, or no single npm package.
func exactLine(r resolve.Resolution) (line []string, version string, err error) {
	spec, ok := r.Launch.NpmSpec()
	if !ok || spec.Exact() {
		return nil, "", nil
	}
	registry, err := npxRegistry(r, r.Policy)
	if err != nil {
		return nil, "", err
	}
	client, err := npmregistry.New(registry)
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), npmregistry.DefaultTimeout)
	defer cancel()
	v, err := client.Resolve(ctx, spec.String())
	if err != nil {
		return nil, "", fmt.Errorf("resolving %s: %w", spec, err)
	}
	return r.Launch.WithVersion(v.Version), v.String(), nil
}
