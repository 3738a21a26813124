package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// prepareCommand is `mcpsandbox prepare [run's options] -- COMMAND`: it
// fetches the launch line's packages once into the server's own cache,
// confined as run would start the server but reaching the package index
// (prepareNetwork), so that run needs no network.
func prepareCommand(args []string, std stdio) int {
	status, _ := prepare(args, launch.FromProcess(), std)
	return status
}

// prepare is prepareCommand for a server started on host (wrap: with the
// variables of the host file's entry), with what is known of a fetch
// that failed.
func prepare(args []string, host launch.Host, std stdio) (int, *prepareFailure) {
	r, status, ok := runPolicyOn("prepare", args, host, std)
	if !ok {
		return status, nil
	}
	step, err := r.Launch.PrepareStep()
	if err != nil {
		return usageFailure("prepare", err.Error(), std), nil
	}
	p := r.Policy
	if p.Unconfined {
		return usageFailure("prepare", "an unconfined server uses your own package cache: there is nothing to prepare", std), nil
	}
	if !p.State {
		return usageFailure("prepare", fmt.Sprintf("the policy %s keeps no package cache (no state directory): prepare fills the one of npx and uvx policies; turn it on with --state", r.Ref), std), nil
	}
	hosts, indexEnv, err := prepareNetwork(filepath.Base(r.Launch.Given[0]), r, p)
	if err != nil {
		return usageFailure("prepare", err.Error(), std), nil
	}
	p.Command = step.Command
	p.Env = append(append(p.Env, step.Env...), indexEnv...)
	// The hosts given on prepare's command line count, for install scripts
	// that fetch from elsewhere; the policy's own are what the server may
	// reach when it runs, which is not what its install needs.
	registryHosts := slices.Clone(hosts)
	hosts = append(hosts, r.Overrides.AllowHosts...)
	p.Net, p.AllowHosts = policy.NetEgress, hosts
	out := &outputTail{w: std.Err}
	log, closeLog, err := newLogger(p.LogFile, p.LogLevel, out.log())
	if err != nil {
		return usageFailure("prepare", err.Error(), std), nil
	}
	defer closeLog()
	logChoice(r, log)
	log.Info("mcpsandbox: prepare reaches only the package index and the hosts given", "server", r.Launch.Name, "hosts", strings.Join(hosts, " "))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go catchSignals(cancel)
	registry, _ := strings.CutPrefix(envOf(indexEnv, "npm_config_registry"), "npm_config_registry=")
	var pkg *preparedPackage
	if registry != "" {
		warn := func(line string) { fmt.Fprintf(std.Err, "mcpsandbox prepare: %s\n", line) }
		if pkg, err = resolvePackage(ctx, r, registry, log, warn); err != nil {
			fmt.Fprintf(std.Err, "mcpsandbox prepare: %v\n", err)
			return exitFailure, nil
		}
	}
	if err := r.Launch.BeginPrepare(r.Policy); err != nil {
		return usageFailure("prepare", err.Error(), std), nil
	}
	start := time.Now()
	ex, err := supervisor.RunOnce(ctx, supervisor.Options{Name: r.Launch.Name, Policy: p, StateDir: r.StateDir(), FormerState: r.FormerState(), Log: log, Setting: flagOf, LookupEnv: r.Host.LookupEnv, Environ: os.Environ()}, out)
	succeeded := err == nil && ex.SetupErr == nil && !ex.Failed()
	var installErr error
	if succeeded && pkg != nil {
		// The lock is written before the prepare counts as done: a
		// package the lock could not record must not start unpinned.
		if installErr = pkg.checkInstalled(r.Launch, r.Policy); installErr == nil {
			if err := pkg.record(r.Launch.Name, ex.Reached, registryHosts); err != nil {
				installErr = fmt.Errorf("recording %s in the lock: %w", pkg.v, err)
			}
		}
		succeeded = installErr == nil
	}
	if err := r.Launch.FinishPrepare(r.Policy, succeeded); err != nil {
		log.Error("mcpsandbox: recording how prepare ended", "error", err)
	}
	switch {
	case ex.SetupErr != nil:
		fmt.Fprintf(std.Err, "mcpsandbox prepare: %s\n", field.Message(ex.SetupErr, flagOf))
		return exitFailure, nil
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(std.Err, "mcpsandbox prepare: stopped")
		return exitFailure, nil
	case ex.Failed():
		cache, _ := npmEnv(p, "npm_config_cache", nil)
		f := prepareFailure{once: ex, script: failedScript(r.StateDir(), cache, start), last: out.lastLine(), args: args}
		fmt.Fprintf(std.Err, "mcpsandbox prepare: %s\n", f)
		return exitFailure, &f
	case installErr != nil:
		fmt.Fprintf(std.Err, "mcpsandbox prepare: %v\n", installErr)
		return exitFailure, nil
	}
	what := r.Launch.Name
	if pkg != nil {
		what = pkg.v.String()
		log.Info("mcpsandbox: prepare recorded the package in the lock", "package", what, "lock", pkg.lockPath)
	}
	fmt.Fprintf(std.Out, "prepared %s in %s: its packages are in %s; `mcpsandbox run` starts it offline now\n",
		what, time.Since(start).Round(100*time.Millisecond), r.StateDir())
	return exitOK, nil
}

// envOf is the variable name's entry of env, or "".
func envOf(env []string, name string) string {
	for _, e := range env {
		if strings.HasPrefix(e, name+"=") {
			return e
		}
	}
	return ""
}

func preparePage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox prepare - fetch a server's packages once, for runs offline",
		Synopsis: []string{"mcpsandbox prepare [OPTIONS] -- COMMAND [ARGS...]"},
		Description: []string{
			"Takes the same options and COMMAND as `mcpsandbox run` and the same policy (the built-in the command selects, or --policy), and fetches the packages that COMMAND's npx or uvx would fetch at start into the server's own package cache, in its state directory. It runs confined as run would, and writes nowhere but that directory. It runs nothing of the packages.",
			"Its network reaches the package index and nothing else (network mode egress, whatever the policy's): for npx the registry npm on this host uses (`npm config get registry`, run where you are, so a project's .npmrc counts; https://registry.npmjs.org/ by default) or the policy's npm_config_registry; for uvx pypi.org and files.pythonhosted.org, or the indexes UV_DEFAULT_INDEX, UV_INDEX_URL, UV_INDEX and UV_EXTRA_INDEX_URL name (from the policy or your environment). The sandboxed npm or uv is told that index, since it sees none of your configuration files. A proxy or a scoped registry in your .npmrc is not followed.",
			"Some packages' install scripts fetch from elsewhere (puppeteer a browser from storage.googleapis.com, prebuilt binaries from github.com): --allow-host HOST given to prepare lets the install reach HOST too. The policy's own allowed hosts do not count: they are what the server may reach when it runs, not what its install needs. A prepare that fails says in its last line what failed (npm's install scripts run in the foreground, so their own words are shown), which hosts the install tried to reach and was kept from, and the prepare command that allows them; or skip the download with the package's own variable, if it has one: --env PUPPETEER_SKIP_DOWNLOAD=true (under wrap: in the entry's env; the last line names it for puppeteer, electron and cypress).",
			"Afterwards run starts the server offline, in about a second. An npx or uvx server that was not prepared fails at once when it has no network, with a message naming this command.",
			"Prepare again to fetch another version: the cache is keyed by the package specs as written (npx -y pkg@1.2.3).",
			"For an npx line of one registry package, prepare first asks the registry which exact version the spec names (pkg, pkg@latest and a range resolve as npm resolves them) and logs it; it refuses a version other than the one the lock pins (--lock FILE, pins.lock, else the user's lock), a registry signature that does not verify, a tarball that does not match its integrity, and provenance from another publisher than the lock records, each with a line naming what failed; a registry that serves no signatures or attestations is logged as not verified. The first prepare of a version younger than the cooldown (--cooldown, 48h) warns. Once npx installed it, the lock records the package: version, integrity, registry, publish time, mcpName, who built it when its provenance verified, and the hosts the install reached. Run and the daemon then refuse to start a cache holding another tarball than the lock pins. See docs/pins.md.",
			"Each npx launch line's success is recorded in the state directory. Until a prepare of its packages succeeded, run and the daemon refuse the server at once with an error naming this command, rather than start it from what a failed or stopped prepare left; a prepare can always be redone, as it first clears what such a one left behind.",
		},
		Options: append([]cmdline.Option{{Group: "Policy", Flag: "--policy FILE|NAME", Text: policyUsage}},
			cmdline.Option{Group: "Other", Flag: "--help, -h", Text: "Print this page. The other options are run's (mcpsandbox help run)."}),
		ExitStatus: []string{
			"0 when the packages are in the cache.",
			"1 when fetching them failed, or the package was refused (not the version or tarball the lock pins, a signature or provenance that does not verify); the last line says why and what prepares it.",
			"2 on a wrong command line, or a COMMAND that fetches nothing at start (not npx or uvx).",
		},
		Examples: []cmdline.Example{
			{Command: "mcpsandbox prepare -- npx -y @modelcontextprotocol/server-memory@2026.8.31",
				Text: "Fetch the memory server once; a host then starts it with `mcpsandbox run -- npx -y @modelcontextprotocol/server-memory@2026.8.31`, offline:"},
		},
	}
}
