package launch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policies"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// builtins are the real built-ins' match sections, as run reads them.
func builtins(t *testing.T) []policy.Match {
	t.Helper()
	m, err := policy.Matches(policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// testHost is a host with its home and working directory in dir.
func testHost(t *testing.T, dir string) Host {
	t.Helper()
	home := filepath.Join(dir, "home")
	wd := filepath.Join(dir, "work")
	mkdirs(t, home, wd)
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}
	return withEnv(Host{Home: home, WorkDir: wd}, env)
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// write makes path (and its directories) hold data.
func write(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	mkdirs(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

func withEnv(h Host, env map[string]string) Host {
	h.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	return h
}
