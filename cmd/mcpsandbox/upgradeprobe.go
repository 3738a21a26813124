package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/contract/override"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
	"github.com/mcpsandbox/mcpsandbox/supervisor/probe"
)

// The candidate is prepared apart: into a state directory of its own
// under a fresh temporary directory (MCPSANDBOX_STATE_DIR points there),
// never the running server's cache, and recorded in a lock of its own
// there, so that nothing the running server or the user's lock holds
// changes before the upgrade is approved.

// apartHost is the machine with state directories under dir.
func apartHost(dir string) launch.Host {
	h := launch.FromProcess()
	h.LookupEnv = func(name string) (string, bool) {
		if name == "MCPSANDBOX_STATE_DIR" {
			return dir, true
		}
		return os.LookupEnv(name)
	}
	return h
}

// apartArgs are prepare's arguments for the candidate, apart.
func (u *upgrade) apartArgs() []string {
	t := u.targets[0]
	flags := append(slices.Clone(t.runFlags), "--lock", filepath.Join(u.apart, "candidate.lock.json"))
	return append(append(flags, "--"), t.launch.WithVersion(u.cand.Version)...)
}

// prepareApart fetches the candidate into a directory of its own, as
// prepare would (registry signatures, integrity, provenance), and refuses
// it when the lock records a publisher the candidate does not come from.
func (u *upgrade) prepareApart(ctx context.Context, std stdio) error {
	dir, err := os.MkdirTemp("", "mcpsandbox-upgrade-")
	if err != nil {
		return err
	}
	u.apart = dir
	if err := os.Chmod(dir, 0o755); err != nil { // the sandbox's user enters it
		return err
	}
	fmt.Fprintf(std.Err, "mcpsandbox upgrade: preparing %s apart, in %s ...\n", u.cand, dir)
	var out, errs bytes.Buffer
	if code, _ := prepare(u.apartArgs(), apartHost(dir), stdio{In: strings.NewReader(""), Out: &out, Err: &errs}); code != exitOK {
		_, _ = io.Copy(std.Err, &errs)
		return fmt.Errorf("preparing %s failed (%s)", u.cand, finalLine(errs.String()))
	}
	f, err := lock.Load(filepath.Join(dir, "candidate.lock.json"))
	if err != nil {
		return err
	}
	if _, s, ok := f.Server(u.id); ok && s.Package != nil {
		u.candPkg = s.Package
	}
	return u.checkPublisher()
}

// checkPublisher refuses a candidate from another publisher than the one
// the lock records, or with no verified provenance where it records one.
func (u *upgrade) checkPublisher() error {
	if u.locked == nil || u.locked.Package == nil || u.locked.Package.Provenance == nil {
		return nil
	}
	want := u.locked.Package.Provenance
	var got *lock.Provenance
	if u.candPkg != nil {
		got = u.candPkg.Provenance
	}
	switch {
	case got == nil:
		return fmt.Errorf("%s comes with no verified provenance, but the lock %s records that %s was built by %s: refused",
			u.cand, u.lockPaths[0], u.spec.Name, publisherWords(want))
	case !samePublisher(got, want):
		return fmt.Errorf("%s was built by %s, but the lock %s records %s for %s: a version from another publisher is refused",
			u.cand, publisherWords(got), u.lockPaths[0], publisherWords(want), u.spec.Name)
	}
	return nil
}

// publisherWords names who built a version.
func publisherWords(p *lock.Provenance) string {
	if p == nil {
		return "no one recorded (no provenance)"
	}
	return fmt.Sprintf("%s (workflow %s, issuer %s)", p.Repository, p.Workflow, p.Issuer)
}

// probe starts the candidate prepared apart in a probe sandbox (package
// probe: no network, none of your environment, a timeout) with the
// grants its launch line and built-in policy need to start, none of
// yours, and lists what it tells the model.
func (u *upgrade) probe(ctx context.Context) error {
	var errs bytes.Buffer
	r, _, ok := runPolicyOn("prepare", u.apartArgs(), apartHost(u.apart), stdio{In: strings.NewReader(""), Out: io.Discard, Err: &errs})
	if !ok {
		return fmt.Errorf("the candidate's policy: %s", strings.TrimSpace(errs.String()))
	}
	p := r.Policy
	p.ReadOnly, p.ReadWrite = nil, nil
	for _, g := range r.Grants {
		switch {
		case !g.Automatic():
		case g.Writable:
			p.ReadWrite = append(p.ReadWrite, g.Path)
		default:
			p.ReadOnly = append(p.ReadOnly, g.Path)
		}
	}
	l, err := probe.Run(ctx, supervisor.Options{Name: r.Launch.Name, Policy: p, StateDir: r.StateDir(), Setting: flagOf}, 0)
	if err != nil {
		return fmt.Errorf("probing %s (no network, an empty state, %s at most): %w", u.cand, probe.Timeout, err)
	}
	if u.seen, err = l.Items(); err != nil {
		return fmt.Errorf("probing %s: %w", u.cand, err)
	}
	// The lock pins a tool as the host sees it, the policy's override applied (as the relay applies it).
	overrides, err := policy.ParseToolOverrides(r.Policy.ToolOverrides)
	if err != nil {
		return fmt.Errorf("the candidate's policy: %w", err)
	}
	for i, it := range u.seen {
		if it.Kind == contract.Tool {
			if u.seen[i], err = override.Item(it, overrides); err != nil {
				return fmt.Errorf("probing %s: %w", u.cand, err)
			}
		}
	}
	var pinned []contract.Item
	if u.locked != nil {
		pinned = u.locked.Contract.Items()
	}
	u.changes = contract.Diff(pinned, u.seen)
	return nil
}
