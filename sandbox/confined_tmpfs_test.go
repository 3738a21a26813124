package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// Spec.Tmpfs: a private, empty, sized tmpfs the server owns, at a path
// that does not exist in the sandbox's root (nor, here, on the host).
func TestConfinedTmpfsIsPrivateSizedAndEmptyEachStart(t *testing.T) {
	requireConfinement(t)
	cache := fmt.Sprintf("/var/cache/mcpsandbox-sbxtest-%d/app", os.Getpid())
	if _, err := os.Lstat(filepath.Dir(cache)); err == nil {
		t.Skipf("%s exists on this host", filepath.Dir(cache))
	}
	scratch := filepath.Join(t.TempDir(), "scratch") // beneath the sandbox's /tmp
	spec := sbxSpec()
	spec.Tmpfs = []string{cache, scratch, sandboxHome + "/.cache"}
	spec.NoExecTmp = true
	script := fmt.Sprintf(`set -e
for d in %[1]s %[2]s %[3]s/.cache; do
  echo "$d before: $(ls -A $d | wc -l)"
  echo "$d owner $(stat -c '%%u %%a' $d) me $(id -u)"
  echo "$d blocks $(stat -f -c '%%b*%%S' $d)"
  echo hello > $d/file
done
if dd if=/dev/zero of=%[1]s/big bs=1M count=9 2>/dev/null; then echo "9MiB fit"; fi
grep -E ' (%[1]s|%[2]s|%[3]s/.cache) ' /proc/self/mountinfo
`, cache, scratch, sandboxHome)
	for run := 1; run <= 2; run++ {
		out := sbxShell(t, spec, script)
		for _, d := range spec.Tmpfs {
			if !strings.Contains(out, d+" before: 0\n") {
				t.Errorf("run %d: %s was not empty at start:\n%s", run, d, out)
			}
			var uid, mode, me string
			line := out[strings.Index(out, d+" owner "):]
			fmt.Sscanf(line, d+" owner %s %s me %s", &uid, &mode, &me)
			if uid != me || mode != "700" {
				t.Errorf("run %d: %s is owned by %s mode %s; want the server (%s), 0700", run, d, uid, mode, me)
			}
			var blocks, bsize int64
			fmt.Sscanf(out[strings.Index(out, d+" blocks "):], d+" blocks %d*%d", &blocks, &bsize)
			if blocks*bsize != spec.TmpSize {
				t.Errorf("run %d: %s holds %d bytes, want TmpSize %d", run, d, blocks*bsize, spec.TmpSize)
			}
		}
		if strings.Contains(out, "9MiB fit") {
			t.Errorf("run %d: 9MiB fit in a tmpfs of %d bytes", run, spec.TmpSize)
		}
		for _, d := range spec.Tmpfs {
			var opts string
			for _, l := range strings.Split(out, "\n") {
				// mountpoint options ... - fstype source super-options
				if f := strings.Fields(l); len(f) > 6 && f[4] == d {
					opts = f[5] + " " + strings.Join(f[slices.Index(f, "-")+1:], " ")
				}
			}
			for _, want := range []string{"nosuid", "nodev", "noexec", "tmpfs"} {
				if !strings.Contains(opts, want) {
					t.Errorf("run %d: %s is mounted %q, want %s", run, d, opts, want)
				}
			}
		}
	}
	if _, err := os.Lstat(filepath.Dir(cache)); err == nil {
		t.Errorf("%s appeared on the host", filepath.Dir(cache))
	}
	if _, err := os.Lstat(scratch); err == nil {
		t.Errorf("%s appeared on the host", scratch)
	}
}

func TestTmpfsPathsAreChecked(t *testing.T) {
	grant := t.TempDir()
	for _, c := range []struct {
		path, want string
	}{
		{"var/cache", "absolute"},
		{"/", "whole root"},
		{"/proc/x", "/proc"},
		{"/dev", "/dev"},
		{"/sys/fs", "/sys"},
		{"/tmp", "private tmpfs already"},
		{grant, "overlaps ReadWrite " + grant},
		{grant + "/cache", "overlaps ReadWrite " + grant},
		{filepath.Dir(grant), "overlaps ReadWrite " + grant},
	} {
		spec := sbxSpec("/bin/true")
		spec.ReadWrite = []string{grant}
		spec.Tmpfs = []string{c.path}
		_, err := newInitConfig(spec)
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Field != "Tmpfs" || fe.Fix == "" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Tmpfs %s: %v; want a Tmpfs error with a fix saying %q", c.path, err, c.want)
		}
	}
	spec := sbxSpec("/bin/true")
	spec.Tmpfs = []string{"/var/cache/a/b", "/var/cache/a/", "/var/cache/a"}
	cfg, err := newInitConfig(spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.Tmpfs, " "); got != "/var/cache/a /var/cache/a/b" {
		t.Errorf("Tmpfs resolved to %q, want each once, parents first", got)
	}
}
