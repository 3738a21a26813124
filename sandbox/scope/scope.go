package scope

import (
	"context"
	"fmt"
	"os"
	"strconv"

	sd "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// Request describes the scope to create.
type Request struct {
	Name        string // what users know the process by (a server's name); the unit is mcpsandbox-NAME-PID.scope
	Description string
	PIDs        []int // the processes to move into it; each must be this user's
}

// Scope is a started scope.
type Scope struct {
	Unit    string // e.g. mcpsandbox-filesystem-1234.scope
	Address string // the D-Bus address that answered
}

// Start asks m for a transient scope with Delegate=yes holding req.PIDs and
// waits until the manager has moved them into it. The scope is collected by
// the manager once its last process exits (a SIGKILL included), with every
// cgroup created inside it.
func Start(ctx context.Context, m Manager, req Request) (Scope, error) {
	conn, addr, err := dial(ctx, m)
	if err != nil {
		return Scope{}, err
	}
	defer conn.Close()
	unit := UnitName(req.Name, os.Getpid())
	pids := make([]uint32, len(req.PIDs))
	for i, p := range req.PIDs {
		pids[i] = uint32(p)
	}
	props := []sd.Property{
		sd.PropDescription(req.Description),
		sd.PropPids(pids...),
		{Name: "Delegate", Value: dbus.MakeVariant(true)},
		// A scope that ends "failed" (its processes killed) is removed too.
		{Name: "CollectMode", Value: dbus.MakeVariant("inactive-or-failed")},
	}
	done := make(chan string, 1)
	if _, err := conn.StartTransientUnitContext(ctx, unit, "fail", props, done); err != nil {
		return Scope{}, fmt.Errorf("%s refused the scope %s: %w", m, unit, err)
	}
	select {
	case result := <-done:
		if result != "done" {
			return Scope{}, fmt.Errorf("%s could not start the scope %s: job %s", m, unit, result)
		}
	case <-ctx.Done():
		return Scope{}, fmt.Errorf("%s did not start the scope %s: %w", m, unit, ctx.Err())
	}
	return Scope{Unit: unit, Address: addr}, nil
}

// Reachable dials m and reports the address that answered.
func Reachable(ctx context.Context, m Manager) (string, error) {
	conn, addr, err := dial(ctx, m)
	if err != nil {
		return "", err
	}
	conn.Close()
	return addr, nil
}

// dial connects to the first of m's addresses that answers.
func dial(ctx context.Context, m Manager) (*sd.Conn, string, error) {
	fail := &unreachable{m: m}
	for _, addr := range m.Addresses {
		if p := socketPath(addr); p != "" {
			if _, err := os.Stat(p); err != nil {
				fail.errs = append(fail.errs, "no socket at "+p)
				continue
			}
		}
		conn, err := sd.NewConnection(func() (*dbus.Conn, error) { return connect(ctx, addr) })
		if err != nil {
			fail.errs = append(fail.errs, addr+": "+err.Error())
			continue
		}
		return conn, addr, nil
	}
	if len(m.Addresses) == 0 {
		fail.errs = append(fail.errs, "no address to try")
	}
	return nil, "", fail
}

// connect opens one authenticated connection; a bus (not a manager's
// private socket) also needs Hello.
func connect(ctx context.Context, addr string) (*dbus.Conn, error) {
	c, err := dbus.Dial(addr, dbus.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	// EXTERNAL with the numeric uid: no user name lookup.
	if err := c.Auth([]dbus.Auth{dbus.AuthExternal(strconv.Itoa(os.Getuid()))}); err != nil {
		c.Close()
		return nil, fmt.Errorf("authentication: %w", err)
	}
	if !private(addr) {
		if err := c.Hello(); err != nil {
			c.Close()
			return nil, fmt.Errorf("hello: %w", err)
		}
	}
	return c, nil
}
