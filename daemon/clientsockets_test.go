package daemon_test

import (
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/daemon"
)

// A host that passes no XDG_RUNTIME_DIR (the TypeScript SDK passes six
// variables only) still reaches its user's daemon, in pam_systemd's runtime
// directory; root's clients go to the system daemon.
func TestClientSocketsWithoutRuntimeDir(t *testing.T) {
	env := func(vars map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	for _, c := range []struct {
		name string
		uid  int
		vars map[string]string
		want []string
	}{
		{"runtime dir set", 1000, map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"},
			[]string{"/run/user/1000/mcpsandbox/daemon.sock", "/run/mcpsandbox/daemon.sock"}},
		{"host env without it", 1000, nil,
			[]string{"/run/user/1000/mcpsandbox/daemon.sock", "/run/mcpsandbox/daemon.sock"}},
		{"root without it", 0, nil, []string{"/run/mcpsandbox/daemon.sock"}},
	} {
		if got := daemon.ClientSockets(c.uid, env(c.vars)); !slices.Equal(got, c.want) {
			t.Errorf("%s: sockets %q, want %q", c.name, got, c.want)
		}
	}
}
