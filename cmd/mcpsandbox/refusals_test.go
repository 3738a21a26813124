package main

import (
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// Each spec the sandbox refuses before starting anything is refused with
// a message that names the setting as run's flag, rendered by run's namer
// (flagOf): no {Field} left, no Go field name.
func TestSandboxRefusalsNameRunsFlags(t *testing.T) {
	dir := t.TempDir()
	grant := filepath.Join(dir, "grant")
	if err := os.Mkdir(grant, 0o755); err != nil {
		t.Fatal(err)
	}
	user := "root" // as root: never uid 0; else: switching users needs root
	for _, c := range []struct {
		name  string
		spec  func(*sandbox.Spec)
		names string // the flag the message must name
		maybe bool   // refused only for some users (as this one says)
	}{
		{"relative grant", func(s *sandbox.Spec) { s.ReadOnly = []string{"relative"} }, "--ro", false},
		{"the root granted", func(s *sandbox.Spec) { s.ReadWrite = []string{"/"} }, "--rw", false},
		{"a grant in /proc", func(s *sandbox.Spec) { s.ReadOnly = []string{"/proc/self"} }, "--ro", false},
		{"granted both ways", func(s *sandbox.Spec) { s.ReadOnly, s.ReadWrite = []string{grant}, []string{grant} }, "--ro", false},
		{"no tmp size", func(s *sandbox.Spec) { s.TmpSize = 0 }, "--tmp-size", false},
		{"no files", func(s *sandbox.Spec) { s.NoFile = 0 }, "--nofile", false},
		{"negative file size", func(s *sandbox.Spec) { s.FileSize = -1 }, "--file-size", false},
		{"relative tmpfs", func(s *sandbox.Spec) { s.Tmpfs = []string{"cache"} }, "--tmpfs", false},
		{"tmpfs over the root", func(s *sandbox.Spec) { s.Tmpfs = []string{"/"} }, "--tmpfs", false},
		{"tmpfs over /sys", func(s *sandbox.Spec) { s.Tmpfs = []string{"/sys/fs"} }, "--tmpfs", false},
		{"tmpfs over /tmp", func(s *sandbox.Spec) { s.Tmpfs = []string{"/tmp"} }, "--tmpfs", false},
		{"tmpfs over a grant", func(s *sandbox.Spec) { s.ReadOnly, s.Tmpfs = []string{grant}, []string{grant + "/x"} }, "--ro", false},
		{"relative state", func(s *sandbox.Spec) { s.StateDir = "state" }, "--state", false},
		{"the root as state", func(s *sandbox.Spec) { s.StateDir = "/" }, "--state", false},
		{"state in /proc", func(s *sandbox.Spec) { s.StateDir = "/proc/x" }, "--state", false},
		{"state granted too", func(s *sandbox.Spec) { s.StateDir, s.ReadOnly = grant, []string{grant} }, "--ro", false},
		{"no such user", func(s *sandbox.Spec) { s.User = "mcpsandbox-no-such-user" }, "--user", false},
		{"root as the user", func(s *sandbox.Spec) { s.User = user }, "--user", false},
		{"more files than the hard limit", func(s *sandbox.Spec) { s.NoFile = math.MaxUint32 }, "--nofile", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := sandbox.Spec{Name: "refusal", Args: []string{"/bin/true"}, TmpSize: 1 << 20, NoFile: 64, Seccomp: "default"}
			c.spec(&spec)
			p, err := sandbox.Start(spec, slog.New(slog.DiscardHandler))
			if err == nil {
				p.Close()
				if c.maybe {
					t.Skip("not refused for this user")
				}
				t.Fatalf("%+v started", spec)
			}
			msg := field.Message(err, flagOf)
			t.Log(msg)
			if raw := testenv.Unrendered(msg, goNames); len(raw) > 0 {
				t.Errorf("the refusal leaves %q unrendered: %s", raw, msg)
			}
			if !strings.Contains(msg, c.names) {
				t.Errorf("the refusal does not name %s: %s", c.names, msg)
			}
		})
	}
}
