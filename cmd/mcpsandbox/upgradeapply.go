package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/hostconfig"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/npmregistry"
)

// candidatePackage is the candidate as the lock will record it: as its
// prepare recorded it, else as the registry describes it.
func (u *upgrade) candidatePackage() *lock.Package {
	if u.candPkg != nil {
		return u.candPkg
	}
	v := u.cand
	return &lock.Package{Name: v.Name, Version: v.Version, Integrity: v.Integrity, Registry: strings.TrimSuffix(u.registry, "/") + "/",
		Published: v.Published.UTC(), MCPName: v.MCPName}
}

// show prints what the upgrade changes: the package, then the contract
// the candidate listed in the probe against the lock's approved one.
func (u *upgrade) show(std stdio) {
	w := std.Out
	next := u.candidatePackage()
	fmt.Fprintf(w, "upgrade %s: %s → %s\n", u.spec.Name, orFloating(u.current), next.Version)
	var prev *lock.Package
	if u.locked != nil {
		prev = u.locked.Package
	}
	if prev != nil {
		fmt.Fprintf(w, "  integrity: %s → %s\n", prev.Integrity, next.Integrity)
		fmt.Fprintf(w, "  publisher: %s → %s\n", publisherWords(prev.Provenance), publisherWords(next.Provenance))
	} else {
		fmt.Fprintf(w, "  integrity: %s\n  publisher: %s\n", next.Integrity, publisherWords(next.Provenance))
	}
	if !next.Published.IsZero() {
		fmt.Fprintf(w, "  published: %s (%s ago; cooldown %s)\n", next.Published.UTC().Format("2006-01-02 15:04 UTC"),
			npmregistry.Words(time.Since(next.Published)), npmregistry.Words(u.cooldown))
	}
	fmt.Fprintf(w, "  lock: %s\n", strings.Join(u.lockPaths, ", "))
	for _, t := range u.targets {
		fmt.Fprintf(w, "  sets the version in: %s (%s)\n", t.file, t.entry)
	}
	fmt.Fprintf(w, "contract of %s as it listed it in a probe sandbox (no network, no secrets, an empty state), against the lock's approved one:\n", next.Version)
	switch {
	case len(u.changes) == 0:
		fmt.Fprintln(w, "  no change: its tools, prompts, resources, instructions and capabilities are as approved")
	case u.locked == nil || u.locked.Contract.Empty():
		fmt.Fprintln(w, "  the lock approved no contract of it yet: everything it lists is new")
		fallthrough
	default:
		contract.Render(indented{w}, u.changes)
	}
}

func orFloating(v string) string {
	if v == "" {
		return "(no version given: what npx found)"
	}
	return v
}

// indented writes every line two spaces in.
type indented struct{ w io.Writer }

func (i indented) Write(p []byte) (int, error) {
	lines := strings.SplitAfter(string(p), "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		if _, err := io.WriteString(i.w, "  "+l); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// askApproval asks on the terminal whether to upgrade; asked is false
// when std.In is no terminal (a script, a host): then only --yes approves.
func askApproval(u *upgrade, std stdio) (approved, asked bool) {
	f, ok := std.In.(*os.File)
	if !ok {
		return false, false
	}
	if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err != nil {
		return false, false
	}
	fmt.Fprintf(std.Out, "Upgrade %s to %s? [y/N] ", u.spec.Name, u.cand.Version)
	line, _ := bufio.NewReader(f).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, true
	}
	return false, true
}

// apply makes the approved upgrade: the candidate prepared into each
// server's own cache, its version written into each file that starts it,
// the lock updated with the package and the contract approved, and each
// running daemon told to read its config again (which swaps its
// instances, sessions kept).
func (u *upgrade) apply(ctx context.Context, std stdio) error {
	if err := u.prepareInPlace(std); err != nil {
		return err
	}
	files := map[string][]upgradeTarget{}
	var order []string
	for _, t := range u.targets {
		if files[t.file] == nil {
			order = append(order, t.file)
		}
		files[t.file] = append(files[t.file], t)
	}
	for _, f := range order {
		if err := u.rewrite(f, files[f]); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	next := u.candidatePackage()
	for _, p := range u.lockPaths {
		if err := lock.Update(p, u.record(next)); err != nil {
			return err
		}
	}
	fmt.Fprintf(std.Out, "upgraded %s to %s: the lock %s approves its contract; written to %s\n",
		u.spec.Name, next.Version, strings.Join(u.lockPaths, ", "), strings.Join(order, ", "))
	for _, f := range order {
		if files[f][0].daemon {
			reloadDaemonsAt(f, u.sockets, std)
		}
	}
	return ctx.Err()
}

// prepareInPlace prepares the candidate into each server's own cache, as
// its run or daemon will start it, so that it starts offline at once.
// Its package is recorded in the lock apart, not the server's lock,
// which pins the old version until the upgrade writes it.
func (u *upgrade) prepareInPlace(std stdio) error {
	var done []string
	for _, t := range u.targets {
		flags := append(slices.Clone(t.runFlags), "--lock", u.apart+"/in-place.lock.json")
		args := append(append(flags, "--"), t.launch.WithVersion(u.cand.Version)...)
		key := strings.Join(args, "\x00") + "\x00" + t.launch.StateDir
		if slices.Contains(done, key) {
			continue
		}
		done = append(done, key)
		fmt.Fprintf(std.Err, "mcpsandbox upgrade: preparing %s for %s (%s) ...\n", u.cand, t.entry, t.file)
		var out, errs bytes.Buffer
		if code, _ := prepare(args, t.host, stdio{In: strings.NewReader(""), Out: &out, Err: &errs}); code != exitOK {
			_, _ = io.Copy(std.Err, &errs)
			return fmt.Errorf("preparing %s for %s failed (%s): nothing was changed", u.cand, t.entry, finalLine(errs.String()))
		}
	}
	return nil
}

// rewrite sets the version of targets' entries in file, every other byte
// kept; for a host's file, wrap's record of what it wrote follows.
func (u *upgrade) rewrite(file string, targets []upgradeTarget) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out := data
	for _, t := range targets {
		command, args := t.withVersion(u.cand.Version)
		if out, err = hostconfig.SetLaunch(out, t.section, t.entry, command, args); err != nil {
			return err
		}
	}
	if !targets[0].daemon {
		state, err := loadWrapState(file)
		if err != nil {
			return err
		}
		for _, t := range targets {
			state.wrapped(hostconfig.Entry{Section: t.section, Name: t.entry}, out)
		}
		if err := state.save(); err != nil {
			return err
		}
	}
	return writeConfig(file, out)
}

// record is the lock's change: the server's package and its contract as
// the probe listed it, approved, nothing held.
func (u *upgrade) record(pkg *lock.Package) func(*lock.File) error {
	return func(f *lock.File) error {
		if f.Servers == nil {
			f.Servers = map[string]*lock.Server{}
		}
		_, s, ok := f.Server(u.id)
		if !ok {
			s = &lock.Server{Name: u.spec.Name}
			f.Servers[u.id] = s
		}
		s.Package = pkg
		s.Contract, s.Pending = lock.Contract{}, lock.Contract{}
		for _, it := range u.seen {
			s.Contract.Put(it, lock.Entry{})
		}
		return nil
	}
}
