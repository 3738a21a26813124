package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/npmregistry"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/resolve"
)

// Before npx installs anything, prepare asks the registry itself which
// exact version the launch line's package spec names, and checks that
// version: against the lock's pin (version, integrity, publisher),
// against the registry's signatures, and against the cooldown. After npx
// installed it, what npm's lockfile says it installed must be that very
// tarball; then the lock records it. A floating line (npx -y pkg) is
// installed as written, so that run finds it, and its install checked.

// preparedPackage is what prepare learned of the launch line's npm package.
type preparedPackage struct {
	spec     launch.NpmSpec
	v        *npmregistry.Version
	registry string
	lockPath string
	id       string
	pinned   *lock.Package // the lock's, nil at first sight
	identity *lock.Provenance
}

// resolvePackage resolves and checks the launch line's npm package on
// registry; nil, nil for a line that installs no single registry package.
func resolvePackage(ctx context.Context, r resolve.Resolution, registry string, log *slog.Logger, warn func(string)) (*preparedPackage, error) {
	spec, ok := r.Launch.NpmSpec()
	if !ok {
		return nil, nil
	}
	pp := &preparedPackage{spec: spec, registry: registry, id: r.Launch.ID}
	var err error
	if pp.lockPath, err = r.LockPath(lock.DefaultPath); err != nil {
		return nil, err
	}
	client, err := npmregistry.New(registry)
	if err != nil {
		return nil, err
	}
	if pp.v, err = client.Resolve(ctx, spec.String()); err != nil {
		return nil, fmt.Errorf("resolving %s: %w", spec, err)
	}
	v := pp.v
	log.Info("mcpsandbox: prepare resolved the package", "spec", spec.String(), "version", v.Version, "integrity", v.Integrity, "registry", registry)
	f, err := lock.Load(pp.lockPath)
	if err != nil {
		return nil, err
	}
	if _, s, ok := f.Server(pp.id); ok {
		pp.pinned = s.Package
	}
	if err := pp.checkPin(r.Launch); err != nil {
		return nil, err
	}
	switch signed, err := client.CheckSignatures(ctx, v); {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", v, err)
	case signed == npmregistry.RegistryServesNoKeys:
		log.Warn("mcpsandbox: "+v.String()+" not verified: the registry serves no signatures", "registry", registry)
	default:
		log.Info("mcpsandbox: "+v.String()+": the registry's signature verifies", "registry", registry)
	}
	// npm checks the tarball too, but retries one that does not match for
	// minutes: the tarball signed for is checked here, at once.
	if err := client.Tarball(ctx, v, io.Discard); err != nil {
		return nil, fmt.Errorf("%w; refused", err)
	}
	if pp.identity, err = provenanceOf(ctx, client, v, log); err != nil {
		return nil, err
	}
	if err := pp.checkIdentity(); err != nil {
		return nil, err
	}
	if pp.pinned == nil {
		if err := npmregistry.CheckCooldown(v, time.Now(), r.Policy.Cooldown); err != nil {
			warn(cooldownWarning(err))
		}
	}
	return pp, nil
}

// cooldownWarning is the one line a first prepare of a young version says.
func cooldownWarning(err error) string {
	var young *npmregistry.TooYoungError
	if !errors.As(err, &young) {
		return "warning: " + err.Error()
	}
	return fmt.Sprintf("warning: %s was published %s ago, less than the cooldown of %s: a bad release is often found and withdrawn in its first days; prepare an older version, or pass --cooldown 0 (pins.cooldown) to take young ones without this warning",
		young.Version, npmregistry.Words(young.Age), npmregistry.Words(young.Cooldown))
}

// checkPin refuses a version other than the one the lock pins, or the
// same version from another tarball.
func (pp *preparedPackage) checkPin(l launch.Launch) error {
	pin, v := pp.pinned, pp.v
	switch {
	case pin == nil:
		return nil
	case pin.Version != v.Version:
		return fmt.Errorf("%s resolves to %s (%s) on %s, but the lock %s pins %s (%s): prepare the pinned version with %s, or review and take %s with %s",
			pp.spec, v.Version, v.Integrity, pp.registry, pp.lockPath, pin.Version, pin.Integrity,
			cmdline.ShellJoin(append([]string{"mcpsandbox", "prepare", "--"}, l.WithVersion(pin.Version)...)), v.Version,
			cmdline.ShellJoin([]string{"mcpsandbox", "upgrade", v.Name, "--to", v.Version}))
	case pin.Integrity != v.Integrity:
		return fmt.Errorf("%s on %s has the integrity %s, but the lock %s pins %s for that version: the tarball is not the one pinned; refused (`mcpsandbox pins list %s` shows the pin)",
			v, pp.registry, v.Integrity, pp.lockPath, pin.Integrity, v.Name)
	}
	return nil
}

// checkIdentity refuses a version built by another publisher than the one
// the lock records, or with no provenance where the lock records one.
func (pp *preparedPackage) checkIdentity() error {
	if pp.pinned == nil || pp.pinned.Provenance == nil {
		return nil
	}
	want, got := pp.pinned.Provenance, pp.identity
	if got == nil {
		return fmt.Errorf("%s comes with no verified provenance, but the lock %s pins its publisher %s: refused", pp.v, pp.lockPath, publisherWords(want))
	}
	if !samePublisher(got, want) {
		return fmt.Errorf("%s was built by %s, but the lock %s pins %s: a version from another publisher is refused", pp.v, publisherWords(got), pp.lockPath, publisherWords(want))
	}
	return nil
}

// samePublisher: a and b were built by the same CI identity (issuer,
// repository, workflow); the commit changes with every release.
func samePublisher(a, b *lock.Provenance) bool {
	return a.Issuer == b.Issuer && a.Repository == b.Repository && a.Workflow == b.Workflow
}

// checkInstalled refuses what npx installed when it is not the tarball
// resolved and checked: the registry's latest may have moved meanwhile.
func (pp *preparedPackage) checkInstalled(l launch.Launch, p policy.Policy) error {
	got, err := l.Installed(p)
	if err != nil {
		return err
	}
	if got.Version != pp.v.Version || got.Integrity != pp.v.Integrity {
		return fmt.Errorf("npx installed %s@%s (%s), not the %s (%s) that prepare resolved and checked (the registry's %s moved meanwhile?): prepare again",
			got.Name, got.Version, orNoIntegrity(got.Integrity), pp.v, pp.v.Integrity, orLatest(pp.spec.Wanted))
	}
	return nil
}

func orNoIntegrity(s string) string {
	if s == "" {
		return "no integrity recorded"
	}
	return s
}

func orLatest(wanted string) string {
	if wanted == "" {
		return "latest"
	}
	return wanted
}

// record writes the package into the lock: the server's entry made at
// first sight, its contract left as it is.
func (pp *preparedPackage) record(name string, reached, registryHosts []string) error {
	v := pp.v
	var hosts []string
	for _, h := range reached {
		if !slices.Contains(registryHosts, h) {
			hosts = append(hosts, h)
		}
	}
	return lock.Update(pp.lockPath, func(f *lock.File) error {
		if f.Servers == nil {
			f.Servers = map[string]*lock.Server{}
		}
		s := f.Servers[pp.id]
		if s == nil {
			s = &lock.Server{Name: name}
			f.Servers[pp.id] = s
		}
		s.Package = &lock.Package{Name: v.Name, Version: v.Version, Integrity: v.Integrity, Registry: strings.TrimSuffix(pp.registry, "/") + "/",
			Published: v.Published.UTC(), Provenance: pp.identity, MCPName: v.MCPName, InstallHosts: hosts}
		return nil
	})
}
