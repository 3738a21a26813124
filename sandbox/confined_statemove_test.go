package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// MoveStateDir moves a server's state under its new name with its owner:
// the server started on the new path runs as the same uid and finds its
// files; as root the uid is recorded for the new path, the old one for
// nothing.
func TestConfinedMovedStateDirKeepsItsServer(t *testing.T) {
	requireConfinement(t)
	base := t.TempDir()
	from, to := filepath.Join(base, "mcp"), filepath.Join(base, "@playwright+mcp")
	script := `set -e; cd "$STATE"; echo "uid $(id -u)"; if [ -f notes ]; then echo "found $(cat notes)"; fi; echo "from $(id -u)" > notes`
	spec := sbxSpec()
	spec.StateDir, spec.Env = from, []string{"STATE=" + from}
	var uid1, uid2 string
	fmt.Sscanf(sbxShell(t, spec, script), "uid %s", &uid1)
	if err := MoveStateDir(from, to); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(from); !os.IsNotExist(err) {
		t.Errorf("%s is still there after the move (%v)", from, err)
	}
	spec.StateDir, spec.Env = to, []string{"STATE=" + to}
	out := sbxShell(t, spec, script)
	fmt.Sscanf(out, "uid %s", &uid2)
	if uid1 == "" || uid2 != uid1 || !strings.Contains(out, "found from "+uid1) {
		t.Errorf("before the move the server ran as %s; after it:\n%s\nwant the same uid finding its file", uid1, out)
	}
	if os.Geteuid() != 0 {
		return
	}
	entry, err := os.ReadFile(filepath.Join(idRegistry, uid1))
	if err != nil || !strings.HasPrefix(string(entry), stateDirKey(to).String()+"\n") {
		t.Errorf("uid %s's registry entry %q (%v) is not the new path's key", uid1, entry, err)
	}
	if id, err := recordedUID(stateDirKey(from)); err != nil || id != 0 {
		t.Errorf("the old path still has uid %d recorded (%v)", id, err)
	}
}

// A directory whose uid the registry records for another server is not
// moved: its files would go to this one.
func TestMoveStateDirRefusesAnotherServersUID(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root's servers have uids of their own")
	}
	identityUseRegistry(t)
	base := t.TempDir()
	from, to := filepath.Join(base, "mcp"), filepath.Join(base, "@x+mcp")
	other := stateDirKey(filepath.Join(base, "elsewhere"))
	id, err := leaseDynamicID(other, "elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(from, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(from, int(id), int(id)); err != nil {
		t.Fatal(err)
	}
	err = MoveStateDir(from, to)
	if err == nil || !strings.Contains(err.Error(), "recorded") || !strings.Contains(err.Error(), "another server") {
		t.Errorf("MoveStateDir of a directory of another server's uid: %v; want a refusal naming the registry", err)
	}
	if _, err := os.Lstat(from); err != nil {
		t.Errorf("the refused directory is gone: %v", err)
	}
	if owner, err := registryOwner(filepath.Join(idRegistry, strconv.FormatUint(uint64(id), 10))); err != nil || owner != other.String() {
		t.Errorf("uid %d's entry changed: %q (%v)", id, owner, err)
	}
}
