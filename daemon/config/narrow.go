package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Limits are what an entry refuses its server beyond what overrides can
// say, since overrides only add to the policy below them: VS Code's
// sandbox is an allow list of writes and hosts, and env null takes a
// variable away. Narrow applies them to the resolved policy.
type Limits struct {
	Sandboxed bool       // sandboxEnabled: writes and hosts only as Writable and Reachable allow
	At        policy.Pos // where sandboxEnabled is
	Writable  []Item     // paths the server may write (allowWrite, its working directory, ~/.npm)
	Reachable []Item     // host specs it may reach (allowedDomains, registry.npmjs.org)
	DenyRead  []Item     // paths it may not read
	DenyWrite []Item     // paths it may not write
	Unset     []Item     // variables it must not have (env NAME: null)
}

// Item is one value of the file and where it is.
type Item struct {
	Value string
	Pos   policy.Pos
}

// Narrow takes from p, the policy resolved for s (resolve.Resolution's),
// what s's Limits refuse: writable grants outside Writable become
// read-only, hosts outside Reachable are dropped (no host left: network
// none), a grant within a denyWrite becomes read-only and one holding it
// gets a read-only grant over it, an unset variable is removed. It fails,
// at the setting's FILE:LINE:COL, where p cannot be narrowed so: a
// denyRead within or around a grant, limits on an unconfined server. p is
// valid again afterwards.
func (s *Server) Narrow(p *policy.Policy) error {
	lim := s.Limits
	if !lim.Sandboxed && len(lim.DenyRead)+len(lim.DenyWrite)+len(lim.Unset) == 0 {
		return nil
	}
	if p.Unconfined {
		at := lim.At
		if !lim.Sandboxed {
			at = first(lim.DenyRead, lim.DenyWrite, lim.Unset).Pos
		}
		return &policy.FileError{Pos: at, Err: &field.Error{Problem: "the server's policy runs it unconfined, so the entry's sandbox settings and null variables cannot hold",
			Fix: "name a policy that confines it"}}
	}
	if err := lim.checkGrants(*p); err != nil {
		return err
	}
	if lim.Sandboxed {
		lim.narrowWrites(p)
		lim.narrowHosts(p)
	}
	for _, d := range lim.DenyWrite {
		p.ReadOnly, p.ReadWrite = readOnlyWithin(d.Value, p.ReadOnly, p.ReadWrite)
		if slices.ContainsFunc(p.ReadWrite, func(g string) bool { return pathrule.Within(d.Value, g) }) && !slices.Contains(p.ReadOnly, d.Value) {
			p.ReadOnly = append(p.ReadOnly, d.Value)
		}
	}
	for _, u := range lim.Unset {
		p.Env = slices.DeleteFunc(p.Env, func(kv string) bool { name, _, _ := strings.Cut(kv, "="); return name == u.Value })
	}
	return p.Validate()
}

func first(lists ...[]Item) Item {
	for _, l := range lists {
		if len(l) > 0 {
			return l[0]
		}
	}
	return Item{}
}

// checkGrants refuses a denyRead that p's grants show: a grant within it,
// or one it lies within.
func (lim Limits) checkGrants(p policy.Policy) error {
	for _, d := range lim.DenyRead {
		for _, g := range slices.Concat(p.ReadOnly, p.ReadWrite) {
			if pathrule.Within(d.Value, g) || pathrule.Within(g, d.Value) {
				return &policy.FileError{Pos: d.Pos, Err: &field.Error{
					Problem: "sandbox.filesystem.denyRead " + d.Value + ": the server's policy grants " + g + ", and a grant shows all of its directory",
					Fix:     "grant the directories beside " + d.Value + " instead of " + g + ", or use a policy that does not grant it"}}
			}
		}
	}
	return nil
}

// narrowWrites makes read-only each writable grant outside Writable.
func (lim Limits) narrowWrites(p *policy.Policy) {
	var rw []string
	for _, g := range p.ReadWrite {
		if slices.ContainsFunc(lim.Writable, func(w Item) bool { return pathrule.Within(g, w.Value) }) {
			rw = append(rw, g)
		} else if !slices.Contains(p.ReadOnly, g) {
			p.ReadOnly = append(p.ReadOnly, g)
		}
	}
	p.ReadWrite = rw
}

// readOnlyWithin moves the writable grants within dir to the read-only.
func readOnlyWithin(dir string, ro, rw []string) ([]string, []string) {
	var keep []string
	for _, g := range rw {
		if pathrule.Within(g, dir) {
			if !slices.Contains(ro, g) {
				ro = append(ro, g)
			}
			continue
		}
		keep = append(keep, g)
	}
	return ro, keep
}

// narrowHosts keeps the hosts Reachable covers: the whole network becomes
// just those hosts, and with none left, no network.
func (lim Limits) narrowHosts(p *policy.Policy) {
	var allowed []policy.HostSpec
	for _, r := range lim.Reachable {
		if h, err := policy.ParseHostSpec(r.Value); err == nil {
			allowed = append(allowed, h)
		}
	}
	switch p.Net {
	case policy.NetNone:
		return
	case policy.NetHost:
		p.AllowHosts = nil
		for _, r := range lim.Reachable {
			if r.Pos != lim.At { // the user's, not VS Code's own default
				p.AllowHosts = append(p.AllowHosts, r.Value)
			}
		}
	default:
		p.AllowHosts = slices.DeleteFunc(p.AllowHosts, func(s string) bool {
			h, err := policy.ParseHostSpec(s)
			return err != nil || !slices.ContainsFunc(allowed, func(a policy.HostSpec) bool { return covers(a, h) })
		})
	}
	p.Net = policy.NetEgress
	if len(p.AllowHosts) == 0 {
		p.Net, p.AllowHosts, p.DenyHosts = policy.NetNone, nil, nil
	}
}

// covers reports whether a allows every connection b does.
func covers(a, b policy.HostSpec) bool {
	for _, port := range b.Ports {
		if !slices.Contains(a.Ports, port) {
			return false
		}
	}
	if len(b.Ports) == 0 && len(a.Ports) > 0 {
		return false
	}
	if b.IsAddr() {
		return a.IsAddr() && a.Addrs.Bits() <= b.Addrs.Bits() && a.Addrs.Contains(b.Addrs.Addr())
	}
	switch {
	case a.IsAddr():
		return false
	case a.Name == "*":
		return true
	case b.Name == "*":
		return false
	case strings.HasPrefix(a.Name, "*."):
		return strings.HasSuffix(strings.TrimPrefix(b.Name, "*"), a.Name[1:]) && b.Name != a.Name[2:]
	}
	return a.Name == b.Name
}

// Place puts err, an error of resolving s (resolve.Resolve's), at the
// place in the file where s sets the field it is about, when s sets it.
func (s *Server) Place(err error) error {
	var fe *field.Error
	var placed *policy.FileError
	if err == nil || errors.As(err, &placed) || !errors.As(err, &fe) {
		return err
	}
	if pos, ok := s.Origin[fe.Field]; ok {
		return &policy.FileError{Pos: pos, Err: fe}
	}
	return err
}

// copyField sets field f of dst from src.
func copyField(dst, src *policy.Policy, f string) {
	reflect.ValueOf(dst).Elem().FieldByName(f).Set(reflect.ValueOf(src).Elem().FieldByName(f))
}
