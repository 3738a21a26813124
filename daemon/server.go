package daemon

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/daemon/config"
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/resolve"
)

// server is one entry of the config, resolved, with its instances.
type server struct {
	d        *daemon
	name     string
	entry    config.Server
	res      resolve.Resolution
	allow    allowed
	prestart int
	max      int

	ctx    context.Context // ends when a reload changes or removes the server, or at shutdown
	cancel context.CancelFunc

	// Under d.mu:
	instances []*instance // every one that has a session or is getting one, in start order
	warm      []*instance // prestarted, waiting for a client: oldest first
	starting  int         // prestarts under way
	pending   []*instance // their instances, for status
	waiting   int         // clients waiting for one of them
	failures  int         // prestarts failed in a row
	retryAt   time.Time   // no prestart before this (backoff)
	lastFail  string      // the reason last logged
	retry     *time.Timer
	changed   chan struct{} // closed and replaced when warm or starting change
	stopped   bool
}

// resolveServer resolves one entry as `run` resolves the same launch line.
func (d *daemon) resolveServer(cfg *config.Config, e config.Server) (*server, error) {
	dir := e.Cwd
	if dir == "" {
		dir = filepath.Dir(cfg.File)
	}
	host := d.opts.Host.InDir(dir)
	res, err := resolve.Resolve(resolve.Request{
		Command:   e.Command,
		Policy:    e.Policy,
		Overrides: e.Overrides,
		Given:     e.Given,
		Host:      host,
	})
	if err == nil {
		// What the entry refuses the server (VS Code's sandbox allow
		// lists, env null) is taken from the resolved policy.
		err = e.Narrow(&res.Policy)
	}
	if err == nil {
		err = res.Policy.Validate()
	}
	if err != nil {
		return nil, entryError(e, err)
	}
	users := e.Users
	if len(users) == 0 {
		users = cfg.Users
	}
	allow, err := allowedOf(users)
	if err != nil {
		return nil, fmt.Errorf("%s: server %q: %w", e.Pos, e.Name, err)
	}
	return &server{d: d, name: e.Name, entry: e, res: res, allow: allow, prestart: e.Prestart, max: e.MaxInstances, changed: make(chan struct{})}, nil
}

// entryError places an error of resolving e at the key of e that it is
// about, else at e itself (an error of a policy file is at its key there).
func entryError(e config.Server, err error) error {
	var fe *field.Error
	if errors.As(err, &fe) && fe.Field == resolve.PolicyField {
		if pos, ok := e.Origin[resolve.PolicyField]; ok {
			return fmt.Errorf("%s: %s", pos, fe.Render(configKey))
		}
	}
	err = e.Place(err)
	msg := field.Message(err, configKey)
	var placed *policy.FileError
	if errors.As(err, &placed) {
		return errors.New(msg)
	}
	return fmt.Errorf("%s: server %q: %s", e.Pos, e.Name, msg)
}

// configKey names a setting as the config's key that sets it: the policy
// reference is "policy", a policy field its policy-file key.
func configKey(f string) string {
	if f == resolve.PolicyField {
		return "policy"
	}
	return policy.KeyOf(f)
}

// allowedOf looks up the users a server allows.
func allowedOf(users []config.User) (allowed, error) {
	var a allowed
	for _, u := range users {
		switch {
		case u.Any:
			a.any = true
			a.names = append(a.names, "*")
		case u.Name != "":
			pw, err := user.Lookup(u.Name)
			if err != nil {
				return a, fmt.Errorf("users: no user %q on this machine: give an existing user's name or uid", u.Name)
			}
			uid, _ := strconv.Atoi(pw.Uid)
			a.uids = append(a.uids, uid)
			a.names = append(a.names, u.Name)
		default:
			a.uids = append(a.uids, u.UID)
			a.names = append(a.names, strconv.Itoa(u.UID))
		}
	}
	return a, nil
}

// start begins the server's life under ctx: its pool fills. Under d.mu.
func (s *server) start(ctx context.Context) {
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.logChoice()
	s.fill()
}

// logChoice says which policy applies and why, as run does.
func (s *server) logChoice() {
	attrs := []any{"server", s.name, "policy", s.res.Ref, "why", s.why(), "prestart", s.prestart, "max_instances", s.max}
	if rt := s.res.Launch.Runtime; rt.Shim != "" {
		attrs = append(attrs, "interpreter", rt.Exe, "via", rt.Via+" shim "+rt.Shim)
	}
	s.d.log.Info("mcpsandbox: policy", attrs...)
	if err := s.res.Launch.RuntimeErr; err != nil {
		s.d.log.Warn("mcpsandbox: the program is started as given", "server", s.name, "err", err)
	}
	if dropped := s.res.NoApprovalDropped; len(dropped) > 0 {
		s.d.log.Warn("mcpsandbox: no call waits for approval (no-approval): tiers dropped", "server", s.name, "tiers", strings.Join(dropped, ","))
	}
}

// why says why the server runs under its policy.
func (s *server) why() string {
	if s.res.Chosen {
		return s.res.Launch.Choice.Why
	}
	return fmt.Sprintf("the entry's policy key (%s)", s.entry.Pos)
}

// count is the server's instances, those being prestarted included: what
// max-instances bounds. Under d.mu.
func (s *server) count() int { return len(s.instances) + s.starting }

// signal wakes clients waiting for a warm instance. Under d.mu.
func (s *server) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// stop ends the server: no more prestarts, every instance stopped (its
// session's shutdown, requests in flight answered).
func (s *server) stop(reason string) {
	s.d.mu.Lock()
	if s.stopped {
		s.d.mu.Unlock()
		return
	}
	s.stopped = true
	if s.retry != nil {
		s.retry.Stop()
		s.retry = nil
	}
	n := len(s.instances)
	s.signal()
	s.d.mu.Unlock()
	if n > 0 {
		s.d.log.Info("mcpsandbox daemon: stopping the server's instances", "server", s.name, "instances", n, "reason", reason)
	}
	s.cancel()
}
