package scope

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestUserManagerIsFoundWithoutTheSessionVariables(t *testing.T) {
	// What a TypeScript-SDK host passes: no XDG_RUNTIME_DIR, no D-Bus address.
	m := forUID(1000, []string{"HOME=/home/u", "PATH=/usr/bin", "USER=u"})
	want := []string{"unix:path=/run/user/1000/systemd/private", "unix:path=/run/user/1000/bus"}
	if !m.User || !slices.Equal(m.Addresses, want) {
		t.Errorf("got %+v, want the user manager at %v", m, want)
	}
}

func TestUserManagerPrefersTheSessionsOwnDirectory(t *testing.T) {
	m := forUID(1000, []string{"XDG_RUNTIME_DIR=/run/user/1000x", "DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/bus,guid=1"})
	want := []string{
		"unix:path=/run/user/1000x/systemd/private", "unix:path=/run/user/1000/systemd/private",
		"unix:path=/tmp/bus,guid=1", "unix:path=/run/user/1000x/bus", "unix:path=/run/user/1000/bus",
	}
	if !slices.Equal(m.Addresses, want) {
		t.Errorf("addresses %v, want %v", m.Addresses, want)
	}
	if got := socketPath("unix:path=/tmp/bus,guid=1"); got != "/tmp/bus" {
		t.Errorf("socketPath = %q", got)
	}
}

func TestRootAsksTheSystemManager(t *testing.T) {
	m := forUID(0, nil)
	if m.User || m.Addresses[0] != "unix:path=/run/systemd/private" || m.Systemctl() != "" {
		t.Errorf("got %+v", m)
	}
}

func TestUnitNameIsValidAndRecognisable(t *testing.T) {
	for name, want := range map[string]string{
		"server-filesystem":      "mcpsandbox-server-filesystem-42.scope",
		"@scope/pkg name":        "mcpsandbox-_scope_pkg_name-42.scope",
		"":                       "mcpsandbox-server-42.scope",
		"..":                     "mcpsandbox-server-42.scope",
		strings.Repeat("x", 300): "mcpsandbox-" + strings.Repeat("x", maxStem) + "-42.scope",
	} {
		if got := UnitName(name, 42); got != want {
			t.Errorf("UnitName(%q) = %q, want %q", name, got, want)
		}
	}
}

// No manager answers at addresses whose sockets do not exist: the error
// names each one tried.
func TestUnreachableManagerNamesWhatWasTried(t *testing.T) {
	m := Manager{User: true, Addresses: []string{"unix:path=/nonexistent/a", "unix:path=/nonexistent/b"}}
	_, err := Start(context.Background(), m, Request{Name: "x", PIDs: []int{1}})
	var u *unreachable
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "/nonexistent/a") || !strings.Contains(err.Error(), "/nonexistent/b") {
		t.Errorf("got %v, want the manager unreachable at both addresses", err)
	}
}
