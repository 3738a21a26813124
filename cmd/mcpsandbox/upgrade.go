package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/npmregistry"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// upgradeOptions are upgrade's command line.
type upgradeOptions struct {
	to           string
	yes          bool
	cooldown     time.Duration
	cooldownSet  bool
	lockFile     string
	daemonConfig string
	hostFiles    []string
	sockets      func() ([]string, error) // the daemons to tell
}

// upgradeCommand is `mcpsandbox upgrade NAME [--to VERSION]`: it prepares
// the candidate version apart, checks its publisher and age, probes it
// with no network (upgradeprobe.go), shows what changes against the
// lock, and on approval writes the lock and the new version into every
// file that starts the server (upgradeapply.go).
func upgradeCommand(args []string, std stdio) int {
	var o upgradeOptions
	fs := newFlagSet("upgrade")
	fs.StringVar(&o.to, "to", "", "")
	fs.BoolVar(&o.yes, "yes", false, "")
	fs.Func("cooldown", "", func(s string) error {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return fmt.Errorf("%q is no duration: e.g. 48h, 30m, 0", s)
		}
		o.cooldown, o.cooldownSet = d, true
		return nil
	})
	fs.StringVar(&o.lockFile, "lock", "", "")
	fs.StringVar(&o.daemonConfig, "config", "", "")
	fs.Func("file", "", func(s string) error { o.hostFiles = append(o.hostFiles, s); return nil })
	o.sockets = socketFlags(fs)
	name, status, ok := upgradeName(fs, args, std)
	if !ok {
		return status
	}
	host := launch.FromProcess()
	socks, err := o.sockets()
	if err != nil {
		return usageFailure("upgrade", err.Error(), std)
	}
	if o.daemonConfig == "" {
		o.daemonConfig = filepath.Join(host.Home, ".config", "mcpsandbox", "daemon.json")
		if ds := answeringDaemonsAt(socks); len(ds) > 0 {
			o.daemonConfig = ds[0].status.Config // that of the daemon status reports on
		}
	}
	if len(o.hostFiles) == 0 {
		for _, f := range foundHostFiles(host.Home) {
			o.hostFiles = append(o.hostFiles, f.Path)
		}
	}
	targets, looked, err := findUpgradeTargets(name, o.daemonConfig, o.hostFiles, host)
	if err != nil {
		return upgradeFailure(err.Error(), std)
	}
	if len(targets) == 0 {
		return upgradeFailure(fmt.Sprintf("no server %q that runs an npm package through npx in %s: upgrade sets the version in the daemon's configuration (--config FILE) and in host files that `mcpsandbox wrap` rewrote (--file FILE)",
			name, orNothing(looked)), std)
	}
	u, err := newUpgrade(o, targets)
	if err != nil {
		return upgradeFailure(err.Error(), std)
	}
	u.sockets = socks
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go catchSignals(cancel)
	if err := u.resolve(ctx); err != nil {
		return upgradeFailure(err.Error(), std)
	}
	if u.current == u.cand.Version {
		fmt.Fprintf(std.Out, "%s is at %s already: nothing to upgrade\n", u.spec.Name, u.current)
		return exitOK
	}
	defer u.cleanup()
	if err := u.prepareApart(ctx, std); err != nil {
		return upgradeFailure(err.Error(), std)
	}
	if err := u.probe(ctx); err != nil {
		return upgradeFailure(err.Error(), std)
	}
	u.show(std)
	if !o.yes {
		switch approved, asked := askApproval(u, std); {
		case !asked:
			fmt.Fprintf(std.Err, "mcpsandbox upgrade: not upgraded: no terminal to ask on; after reviewing the changes above, approve them with %s\n",
				cmdline.ShellJoin([]string{"mcpsandbox", "upgrade", name, "--to", u.cand.Version, "--yes"}))
			return exitFailure
		case !approved:
			fmt.Fprintln(std.Err, "mcpsandbox upgrade: not upgraded")
			return exitFailure
		}
	}
	if err := u.apply(ctx, std); err != nil {
		return upgradeFailure(err.Error(), std)
	}
	return exitOK
}

func upgradeName(fs *flag.FlagSet, args []string, std stdio) (string, int, bool) {
	var names []string
	for rest := args; ; { // NAME and options in any order
		if status, ok := parseFlags(fs, "upgrade", rest, std); !ok {
			return "", status, false
		}
		if fs.NArg() == 0 {
			break
		}
		names, rest = append(names, fs.Arg(0)), fs.Args()[1:]
	}
	if len(names) != 1 {
		return "", usageFailure("upgrade", "give the server's NAME, once: mcpsandbox upgrade NAME [--to VERSION]", std), false
	}
	return names[0], exitOK, true
}

func upgradeFailure(msg string, std stdio) int {
	fmt.Fprintf(std.Err, "mcpsandbox upgrade: %s\n", msg)
	return exitFailure
}

func orNothing(looked []string) string {
	if len(looked) == 0 {
		return "no daemon configuration and no host file wrap manages"
	}
	return strings.Join(looked, ", ")
}

// upgrade is one upgrade under way.
type upgrade struct {
	o       upgradeOptions
	targets []upgradeTarget
	spec    launch.NpmSpec
	id      string
	current string // the version running now: the lock's, else the spec's

	sockets   []string // the daemons to tell of a changed config
	lockPaths []string // the locks of the targets, first the one compared against
	locked    *lock.Server
	registry  string
	cooldown  time.Duration

	cand    *npmregistry.Version
	candPkg *lock.Package // what the candidate's prepare recorded
	apart   string        // the directory the candidate is prepared in
	seen    []contract.Item
	changes []contract.Change
}

func newUpgrade(o upgradeOptions, targets []upgradeTarget) (*upgrade, error) {
	u := &upgrade{o: o, targets: targets, spec: targets[0].spec, id: targets[0].launch.ID}
	for _, t := range targets[1:] {
		if t.spec.Name != u.spec.Name {
			return nil, fmt.Errorf("%s (%s) runs %s, %s (%s) runs %s: name one of the two entries",
				targets[0].entry, targets[0].file, u.spec.Name, t.entry, t.file, t.spec.Name)
		}
	}
	for _, t := range targets {
		p, err := u.lockPathOf(t)
		if err != nil {
			return nil, err
		}
		if !containsPath(u.lockPaths, p) {
			u.lockPaths = append(u.lockPaths, p)
		}
	}
	f, err := lock.Load(u.lockPaths[0])
	if err != nil {
		return nil, err
	}
	if _, s, ok := f.Server(u.id); ok {
		u.locked = s
	}
	u.current = u.spec.Wanted
	if u.locked != nil && u.locked.Package != nil {
		u.current = u.locked.Package.Version
	}
	return u, nil
}

// lockPathOf is the lock that pins t's server: --lock, else the one its
// relay reads (its run options' --lock or its policy's pins.lock, else
// the daemon's beside its config, else the user's).
func (u *upgrade) lockPathOf(t upgradeTarget) (string, error) {
	if u.o.lockFile != "" {
		return u.o.lockFile, nil
	}
	args := append(append(slices.Clone(t.runFlags), "--"), t.line()...)
	r, status, ok := runPolicyOn("prepare", args, t.host, stdio{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	if !ok || status != exitOK {
		return "", policyFailure(t)
	}
	return r.LockPath(func() (string, error) {
		if t.daemon {
			return lock.BesideConfig(t.file), nil
		}
		return lock.DefaultPath()
	})
}

// policyFailure says that t's policy does not resolve, and how to see why.
func policyFailure(t upgradeTarget) error {
	return fmt.Errorf("the policy of %s does not resolve: `mcpsandbox policy explain -- %s` says why", t.entry, cmdline.ShellJoin(t.line()))
}

func containsPath(paths []string, p string) bool {
	for _, q := range paths {
		if q == p || sameFile(q, p) {
			return true
		}
	}
	return false
}

// resolve finds the candidate version on the registry and refuses one
// younger than the cooldown.
func (u *upgrade) resolve(ctx context.Context) error {
	r, status, ok := runPolicyOn("prepare", u.targets[0].runArgs(u.current), launch.FromProcess(), stdio{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	if !ok || status != exitOK {
		return policyFailure(u.targets[0])
	}
	u.cooldown = r.Policy.Cooldown
	if u.o.cooldownSet {
		u.cooldown = u.o.cooldown
	}
	registry, err := npxRegistry(r, r.Policy)
	if err != nil {
		return err
	}
	u.registry = registry
	client, err := npmregistry.New(registry)
	if err != nil {
		return err
	}
	want := u.spec.Name
	if u.o.to != "" {
		want += "@" + u.o.to
	}
	if u.cand, err = client.Resolve(ctx, want); err != nil {
		return fmt.Errorf("resolving %s: %w", want, err)
	}
	if u.cand.Version == u.current {
		return nil
	}
	if err := npmregistry.CheckCooldown(u.cand, time.Now(), u.cooldown); err != nil {
		var young *npmregistry.TooYoungError
		if errors.As(err, &young) {
			return fmt.Errorf("%s was published %s ago (%s), younger than the cooldown of %s: not taken; a bad release is often found and withdrawn in its first days. Wait until %s, or take it now with --cooldown 0 after a look at who published it",
				young.Version, npmregistry.Words(young.Age), young.Published.UTC().Format("2006-01-02 15:04 UTC"), npmregistry.Words(young.Cooldown),
				young.Published.Add(young.Cooldown).UTC().Format("2006-01-02 15:04 UTC"))
		}
		return err
	}
	return nil
}

// cleanup removes what was prepared apart and frees the sandbox uid its
// state directories were given (the only place that uid wrote).
func (u *upgrade) cleanup() {
	if u.apart == "" {
		return
	}
	dirs, _ := os.ReadDir(u.apart)
	if err := os.RemoveAll(u.apart); err != nil {
		return
	}
	for _, d := range dirs {
		_ = sandbox.ForgetStateDir(filepath.Join(u.apart, d.Name()))
	}
}
