package launch

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

func TestStateDir(t *testing.T) {
	matches := builtins(t)
	mem := []string{"npx", "-y", "@modelcontextprotocol/server-memory"}
	user := Host{Home: "/home/u", WorkDir: "/w"}
	root := Host{Home: "/root", WorkDir: "/w", Root: true}
	for _, c := range []struct {
		cmd  []string
		h    Host
		env  map[string]string
		want string
	}{
		{mem, root, nil, "/var/lib/mcpsandbox/npm+@modelcontextprotocol+server-memory"},
		{mem, root, map[string]string{"XDG_STATE_HOME": "/xdg"}, "/var/lib/mcpsandbox/npm+@modelcontextprotocol+server-memory"},
		{mem, user, nil, "/home/u/.local/state/mcpsandbox/npm+@modelcontextprotocol+server-memory"},
		{mem, user, map[string]string{"XDG_STATE_HOME": "/xdg"}, "/xdg/mcpsandbox/npm+@modelcontextprotocol+server-memory"},
		// A relative XDG_STATE_HOME is to be ignored (the XDG spec).
		{mem, user, map[string]string{"XDG_STATE_HOME": "rel/state"}, "/home/u/.local/state/mcpsandbox/npm+@modelcontextprotocol+server-memory"},
		// No home and no XDG_STATE_HOME: nowhere, not a relative path.
		{mem, Host{WorkDir: "/w"}, nil, ""},
		// What no grammar names is labelled, and told apart by a hash.
		{[]string{"/opt/ids"}, root, nil, "/var/lib/mcpsandbox/bin+ids+8cb525dd5edb78a6"},
		{[]string{"npx", "-y", "ids"}, root, nil, "/var/lib/mcpsandbox/npm+ids"},
		{[]string{"python3", "-m", "a/../b c"}, root, nil, "/var/lib/mcpsandbox/pymod+a_.._b_c+96f17eac62f33dd5"},
		{[]string{"python3", "-m", ".."}, root, nil, "/var/lib/mcpsandbox/pymod+server+0b6f2dd5dba2cd15"},
		{[]string{"python3", "-m", "é"}, root, nil, "/var/lib/mcpsandbox/pymod+_+c0a9b7831205446a"},
	} {
		h := c.h
		if c.env != nil {
			h = withEnv(h, c.env)
		}
		l := Read(c.cmd, matches, h)
		if l.StateDir != c.want || l.Vars.State != c.want {
			t.Errorf("%q (root %v, env %v): StateDir %q, want %q", c.cmd, h.Root, c.env, l.StateDir, c.want)
		}
		if c.want != "" && filepath.Dir(c.want) != filepath.Dir(l.StateDir) {
			t.Errorf("%q: %s is not one element below its base", c.cmd, l.StateDir)
		}
	}
}

// TestStateEnv: the memory built-in's file lands in the state directory,
// unless the policy sets the variable itself.
func TestStateEnv(t *testing.T) {
	l := Read([]string{"npx", "-y", "some-server"}, builtins(t), Host{Home: "/root", Root: true})
	p := policy.Default()
	p.State, p.StateEnv = true, "DATA_DIR"
	if err := l.Apply(&p); err != nil || !slices.Contains(p.Env, "DATA_DIR="+l.StateDir) {
		t.Errorf("Env %q (%v), want DATA_DIR=%s", p.Env, err, l.StateDir)
	}
	p = policy.Default()
	p.State, p.StateEnv, p.Env = true, "DATA_DIR", []string{"DATA_DIR=/elsewhere"}
	if err := l.Apply(&p); err != nil || !slices.Equal(p.Env, []string{"DATA_DIR=/elsewhere"}) {
		t.Errorf("Env %q (%v), want the policy's own", p.Env, err)
	}
	// Without a state directory there is nothing to point at.
	l = Read([]string{"npx", "-y", "some-server"}, builtins(t), Host{})
	p = policy.Default()
	p.State, p.StateEnv = true, "DATA_DIR"
	if err := l.Apply(&p); err != nil || slices.ContainsFunc(p.Env, func(e string) bool { return strings.HasPrefix(e, "DATA_DIR") }) {
		t.Errorf("no state directory: Env %q (%v)", p.Env, err)
	}
}
