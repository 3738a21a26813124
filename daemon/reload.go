package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/daemon/config"
)

// ReloadReport says what a reload did, server by server.
type ReloadReport struct {
	Config string `json:"config"`
	// Unchanged servers kept their instances; Updated ones too, their
	// users, prestart or max-instances applied in place (the policy they
	// resolve to is the same).
	Unchanged []string `json:"unchanged"`
	Updated   []string `json:"updated"`
	// Changed servers resolve to a new policy: their live instances were
	// stopped, new ones get it. Removed ones were stopped.
	Changed []string `json:"changed"`
	// Swapped servers changed their launch line only (an upgrade's new
	// package version): their instances restart on it invisibly, as
	// `mcpsandbox restart` restarts them, hosts' sessions replayed.
	Swapped []string `json:"swapped"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	// Stopped counts the instances stopped.
	Stopped int `json:"stopped_instances"`
}

// Summary is the report in one line.
func (r *ReloadReport) Summary() string {
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"unchanged", r.Unchanged}, {"updated in place", r.Updated}, {"changed", r.Changed}, {"swapped to the new launch line, sessions kept", r.Swapped}, {"added", r.Added}, {"removed", r.Removed}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+": "+strings.Join(p.names, ", "))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no servers")
	}
	return fmt.Sprintf("%s (%d instances stopped)", strings.Join(parts, "; "), r.Stopped)
}

// ConfigError is a config that does not load or resolve: Run's error when
// nothing started because of it.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// load reads the config and resolves every entry; any error refuses the
// whole config, each entry's error on a line of its own.
func (d *daemon) load() (*config.Config, []*server, error) {
	cfg, err := config.Load(d.opts.Config)
	if err != nil {
		return nil, nil, err
	}
	var servers []*server
	var errs []error
	for _, e := range cfg.Servers {
		if e.Disabled {
			continue
		}
		s, err := d.resolveServer(cfg, e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		servers = append(servers, s)
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	for _, w := range cfg.Warnings {
		d.log.Warn("mcpsandbox daemon: config note", "config", cfg.File, "note", w)
	}
	return cfg, servers, nil
}

// reload applies the config file as it is now, or keeps the running one
// and returns why not.
func (d *daemon) reload() (*ReloadReport, error) {
	d.reloading.Lock()
	defer d.reloading.Unlock()
	cfg, servers, err := d.load()
	if err != nil {
		d.log.Error("mcpsandbox daemon: reload failed; the running config stays", "error", err)
		return nil, err
	}
	rep := &ReloadReport{Config: cfg.File, Unchanged: []string{}, Updated: []string{}, Changed: []string{}, Swapped: []string{}, Added: []string{}, Removed: []string{}}
	var stop []*server
	var stopWhy []string
	var swap []*instance
	d.mu.Lock()
	if d.closing {
		d.mu.Unlock()
		return nil, errors.New("the daemon is shutting down")
	}
	next := map[string]*server{}
	var order []string
	for _, ns := range servers {
		old := d.servers[ns.name]
		switch {
		case old == nil:
			rep.Added = append(rep.Added, ns.name)
			ns.start(d.ctx)
			next[ns.name] = ns
		case samePolicy(old, ns):
			if old.update(ns) {
				rep.Updated = append(rep.Updated, ns.name)
			} else {
				rep.Unchanged = append(rep.Unchanged, ns.name)
			}
			next[ns.name] = old
		case sameButLaunchLine(old, ns):
			rep.Swapped = append(rep.Swapped, ns.name)
			swap = append(swap, old.swap(ns)...)
			next[ns.name] = old
		default:
			rep.Changed = append(rep.Changed, ns.name)
			rep.Stopped += len(old.instances)
			stop, stopWhy = append(stop, old), append(stopWhy, "its settings changed in the config (reload); new instances get them")
			ns.start(d.ctx)
			next[ns.name] = ns
		}
		order = append(order, ns.name)
	}
	for _, name := range d.order {
		if next[name] == nil {
			old := d.servers[name]
			rep.Removed = append(rep.Removed, name)
			rep.Stopped += len(old.instances)
			stop, stopWhy = append(stop, old), append(stopWhy, "it was removed from the config (reload)")
		}
	}
	d.servers, d.order, d.cfg = next, order, cfg
	d.mu.Unlock()
	for i, s := range stop {
		s.stop(stopWhy[i])
	}
	for _, inst := range swap {
		if err := inst.sess.Restart("its launch line changed in the config (reload): the new one runs, the session replayed onto it"); err != nil {
			d.log.Info("mcpsandbox daemon: instance not swapped", "instance", inst.id, "error", err)
		}
	}
	for _, name := range rep.Removed {
		d.rings.forget(name)
	}
	d.log.Info("mcpsandbox daemon: config reloaded", "config", cfg.File, "summary", rep.Summary())
	return rep, nil
}

// samePolicy: ns resolves to what old runs, so old's instances may stay.
func samePolicy(old, ns *server) bool {
	return reflect.DeepEqual(old.res.Policy, ns.res.Policy) && old.res.StateDir() == ns.res.StateDir()
}

// sameButLaunchLine: ns differs from what old runs in its launch line
// alone (the command, as an upgrade writes a new package version), in the
// same state directory: old's instances may restart on it, confined as
// they were.
func sameButLaunchLine(old, ns *server) bool {
	a, b := old.res.Policy, ns.res.Policy
	a.Command, b.Command = nil, nil
	return reflect.DeepEqual(a, b) && old.res.StateDir() == ns.res.StateDir()
}

// swap takes ns's settings into old as update does and returns the
// instances with a session, for the caller to restart (outside d.mu):
// each start reads the launch line anew (options). Warm instances go, for
// fill to make new ones. Under d.mu.
func (old *server) swap(ns *server) []*instance {
	old.update(ns)
	var restart []*instance
	for _, inst := range old.instances {
		if inst.sess != nil && inst.attached {
			restart = append(restart, inst)
		}
	}
	for _, w := range old.warm {
		w.cancel()
	}
	old.warm = old.warm[:0]
	old.fill()
	return restart
}

// update takes ns's settings into old, whose instances stay, and says
// whether any differ. Under d.mu.
func (old *server) update(ns *server) bool {
	differs := !bytes.Equal(old.entry.Raw, ns.entry.Raw) || !reflect.DeepEqual(old.allow, ns.allow) ||
		old.prestart != ns.prestart || old.max != ns.max
	old.entry, old.res, old.allow, old.prestart, old.max = ns.entry, ns.res, ns.allow, ns.prestart, ns.max
	// A user the new users no longer allow loses the sessions it has.
	for _, inst := range old.instances {
		if inst.attached && !old.allow.has(inst.client.UID, old.d.self) {
			old.d.log.Warn("mcpsandbox daemon: ending a session whose user the reloaded config no longer allows", "server", old.name, "instance", inst.id, "uid", inst.client.UID, "users", old.allow.String())
			inst.cancel()
		}
	}
	// Warm instances beyond a lowered prestart go; clients keep theirs.
	for len(old.warm) > old.prestart {
		surplus := old.warm[len(old.warm)-1]
		old.warm = old.warm[:len(old.warm)-1]
		surplus.cancel()
	}
	old.fill()
	return differs
}
