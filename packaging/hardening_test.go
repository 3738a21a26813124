package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Two of the system unit's directives, as far as they can be had without
// systemd: NoNewPrivileges=yes (setpriv --no-new-privs) and
// ProtectSystem=full (/usr, /boot and /etc read-only in a mount namespace)
// leave confinement intact: doctor's confined /bin/true still runs.
func TestSystemUnitHardeningLeavesConfinementIntact(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpsandbox")
	}
	if os.Geteuid() != 0 {
		t.Skip("the system unit runs as root")
	}
	for _, tool := range []string{"unshare", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s (util-linux)", tool)
		}
	}
	for _, d := range []string{"NoNewPrivileges=yes\n", "ProtectSystem=full\n"} {
		if !strings.Contains(Unit(false), d) {
			t.Fatalf("the system unit has no %s", d)
		}
	}
	binary := filepath.Join(t.TempDir(), "mcpsandbox")
	if b, err := exec.Command("go", "build", "-o", binary, "../cmd/mcpsandbox").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	script := `for d in /usr /boot /etc; do
  [ -d $d ] || continue
  mount --bind $d $d && mount -o remount,bind,ro $d || exit 99
done
touch /etc/.mcpsandbox-rw-probe 2>/dev/null && { rm -f /etc/.mcpsandbox-rw-probe; echo "/etc is writable"; exit 98; }
exec setpriv --no-new-privs "$0" doctor`
	out, err := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script, binary).CombinedOutput()
	if !strings.Contains(string(out), "ok    confined /bin/true") {
		t.Errorf("doctor under no_new_privs with /usr, /boot and /etc read-only: %v\n%s", err, out)
	}
}
