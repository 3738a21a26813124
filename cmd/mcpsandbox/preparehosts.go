package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/resolve"
)

// prepare reaches the package index its tool fetches from and nothing
// else (network mode egress): npm's registry as npm on this host is
// configured (`npm config get registry`), uv's index as its variables
// name, or PyPI. The sandboxed tool is told the same index, since it sees
// none of your configuration files.

const (
	npmDefaultRegistry = "https://registry.npmjs.org/"
	npmConfigTimeout   = 20 * time.Second
)

// uvIndexVars are uv's variables naming an index; the first two replace
// PyPI, the others add to it.
var uvIndexVars = []string{"UV_DEFAULT_INDEX", "UV_INDEX_URL", "UV_INDEX", "UV_EXTRA_INDEX_URL"}

// pypiHosts are where uv fetches from PyPI: the index and the files.
var pypiHosts = []string{"pypi.org:443", "files.pythonhosted.org:443"}

// prepareNetwork returns the hosts prepare may reach for tool (npx or
// uvx) under p, and the variables that point the tool at them.
func prepareNetwork(tool string, r resolve.Resolution, p policy.Policy) (hosts, env []string, err error) {
	lookup := func(name string) (string, bool) { return policyEnv(p, name, r.Host.LookupEnv) }
	switch tool {
	case "npx":
		registry, err := npxRegistry(r, p)
		if err != nil {
			return nil, nil, err
		}
		hosts, err = indexHosts("the npm registry", registry)
		return hosts, []string{"npm_config_registry=" + registry}, err
	case "uvx":
		replaced := false
		for i, name := range uvIndexVars {
			v, ok := lookup(name)
			if !ok || strings.TrimSpace(v) == "" {
				continue
			}
			replaced = replaced || i < 2
			for _, index := range strings.Fields(v) {
				if name, url, named := strings.Cut(index, "="); named && !strings.Contains(name, "://") {
					index = url // UV_INDEX's NAME=URL
				}
				h, err := indexHosts(name, index)
				if err != nil {
					return nil, nil, err
				}
				hosts = append(hosts, h...)
			}
			env = append(env, name+"="+v)
		}
		if !replaced {
			hosts = append(slices.Clone(pypiHosts), hosts...)
		}
		return hosts, env, nil
	}
	return nil, nil, fmt.Errorf("prepare: no package index known for %s", tool)
}

// npxRegistry is the registry npx installs from under p: the policy's
// npm_config_registry, else the one npm on this host is configured with.
func npxRegistry(r resolve.Resolution, p policy.Policy) (string, error) {
	if registry, ok := npmEnv(p, "npm_config_registry", r.Host.LookupEnv); ok {
		return registry, nil
	}
	return npmRegistry(r)
}

// indexHosts are the hosts of an index URL.
func indexHosts(what, index string) ([]string, error) {
	hosts, isURL, err := policy.URLHosts(strings.TrimSpace(index))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %v", what, err)
	case !isURL || len(hosts) == 0:
		return nil, fmt.Errorf("%s %q is no URL of a host: give one such as %s", what, index, npmDefaultRegistry)
	}
	return hosts, nil
}

// policyEnv is name's value as the policy sets or passes it, else as the
// host has it.
func policyEnv(p policy.Policy, name string, lookupEnv func(string) (string, bool)) (string, bool) {
	return envIn(p, name, lookupEnv, func(a, b string) bool { return a == b })
}

// npmEnv is npm's variable name as policyEnv finds it, in any case: npm
// reads npm_config_* whatever their case, so NPM_CONFIG_REGISTRY names
// its registry as well.
func npmEnv(p policy.Policy, name string, lookupEnv func(string) (string, bool)) (string, bool) {
	if lookupEnv != nil {
		host := lookupEnv
		lookupEnv = func(n string) (string, bool) {
			if v, ok := host(n); ok {
				return v, ok
			}
			return host(strings.ToUpper(n))
		}
	}
	return envIn(p, name, lookupEnv, strings.EqualFold)
}

// envIn is the value of the policy's last entry for name (under same),
// looked up on the host when that entry passes it on by name alone, or
// when the policy has none.
func envIn(p policy.Policy, name string, lookupEnv func(string) (string, bool), same func(a, b string) bool) (string, bool) {
	for i := len(p.Env) - 1; i >= 0; i-- {
		k, v, set := strings.Cut(p.Env[i], "=")
		if !same(k, name) {
			continue
		}
		if set {
			return v, true
		}
		break
	}
	if lookupEnv == nil {
		return "", false
	}
	return lookupEnv(name)
}

// npmRegistry asks this host's npm (beside the npx that runs, else on
// PATH) which registry it uses; without an npm, npm's default.
func npmRegistry(r resolve.Resolution) (string, error) {
	npm := ""
	var dirs []string
	if bin := r.Launch.Runtime.Bin; bin != "" {
		dirs = append(dirs, bin)
	}
	if exe := r.Launch.Runtime.Exe; exe != "" {
		dirs = append(dirs, filepath.Dir(exe))
	}
	for _, d := range dirs {
		if st, err := os.Stat(filepath.Join(d, "npm")); err == nil && !st.IsDir() {
			npm = filepath.Join(d, "npm")
			break
		}
	}
	if npm == "" {
		found, err := exec.LookPath("npm")
		if err != nil {
			return npmDefaultRegistry, nil
		}
		npm = found
	}
	ctx, cancel := context.WithTimeout(context.Background(), npmConfigTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "config", "get", "registry")
	cmd.Dir = r.Host.WorkDir // a project's .npmrc counts, as for npx there
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%v: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("asking npm for its registry (%s config get registry): %v; set npm_config_registry to name it", npm, err)
	}
	registry := strings.TrimSpace(string(out))
	if registry == "" || registry == "undefined" || registry == "null" {
		return npmDefaultRegistry, nil
	}
	return registry, nil
}
