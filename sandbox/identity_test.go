package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// identityUseRegistry points the dynamic-id registry at a fresh directory
// for one test.
func identityUseRegistry(t *testing.T) string {
	t.Helper()
	saved := idRegistry
	idRegistry = filepath.Join(t.TempDir(), "ids")
	t.Cleanup(func() { idRegistry = saved })
	return idRegistry
}

func identityOf(t *testing.T, spec Spec) serverKey {
	t.Helper()
	cfg, err := newInitConfig(spec)
	if err != nil {
		t.Fatal(err)
	}
	return identityKey(cfg, spec)
}

func TestServerIdentityIsWhatItIsAndReaches(t *testing.T) {
	dir1, dir2 := t.TempDir(), t.TempDir()
	base := func() Spec {
		s := sbxSpec("/bin/sh", "-c", "exec node dist/index.js")
		s.ReadOnly, s.ReadWrite, s.Env = []string{dir1}, []string{dir2}, []string{"A=1", "B=2"}
		return s
	}
	same := map[string]func(*Spec){
		"a restart":               func(*Spec) {},
		"another label":           func(s *Spec) { s.Name = "other" },
		"other limits":            func(s *Spec) { s.Memory, s.Pids, s.CPU, s.TmpSize, s.NoFile = 1<<30, 512, 2, 1<<30, 4096 },
		"grants in another order": func(s *Spec) { s.ReadOnly = []string{dir1, dir1 + "/."} },
		"env in another order":    func(s *Spec) { s.Env = []string{"B=2", "A=1"} },
		"a tmpfs":                 func(s *Spec) { s.Tmpfs = []string{"/var/cache/app"} },
	}
	differs := map[string]func(*Spec){
		"another script":       func(s *Spec) { s.Args = []string{"/bin/sh", "-c", "exec node other/index.js"} },
		"another program":      func(s *Spec) { s.Args[0] = "/bin/dash"; s.Args = append(s.Args[:1:1], "-c", "x") },
		"another dir":          func(s *Spec) { s.Dir = "/tmp" },
		"one grant less":       func(s *Spec) { s.ReadOnly = nil },
		"a grant writable":     func(s *Spec) { s.ReadOnly, s.ReadWrite = nil, []string{dir1, dir2} },
		"the host's network":   func(s *Spec) { s.Net = NetHost },
		"another env value":    func(s *Spec) { s.Env = []string{"A=1", "B=3"} },
		"another seccomp":      func(s *Spec) { s.Seccomp = filepath.Join(dir1, "profile.json") },
		"seccomp only logging": func(s *Spec) { s.SeccompLog = true },
		"a state dir":          func(s *Spec) { s.StateDir = "/var/lib/app" },
	}
	want := identityOf(t, base())
	for name, change := range same {
		s := base()
		change(&s)
		if got := identityOf(t, s); got != want {
			t.Errorf("%s changed the server's identity", name)
		}
	}
	for name, change := range differs {
		s := base()
		change(&s)
		if got := identityOf(t, s); got == want {
			t.Errorf("%s kept the server's identity", name)
		}
	}
}

func TestDynamicUIDsAreRecordedForGood(t *testing.T) {
	idmapRequireRoot(t)
	reg := identityUseRegistry(t)
	a := identityOf(t, sbxSpec("/bin/sh", "-c", "a"))
	b := identityOf(t, sbxSpec("/bin/sh", "-c", "b"))

	// b's preferred id was given to a server before: b must get another.
	taken := DynamicIDFirst + b.preferred()
	entry := filepath.Join(reg, strconv.FormatUint(uint64(taken), 10))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(reg, 0o700))
	must(os.WriteFile(entry, []byte(a.String()+"\nearlier\n"), 0o600))
	idB, err := leaseDynamicID(b, "b")
	must(err)
	if idB == taken {
		t.Fatalf("b got uid %d, recorded for another server", taken)
	}
	if got, _ := os.ReadFile(entry); !strings.HasPrefix(string(got), a.String()) {
		t.Errorf("the earlier entry changed: %q", got)
	}
	// An entry that cannot be read as a key is someone's too.
	must(os.WriteFile(filepath.Join(reg, strconv.FormatUint(uint64(idB)+1, 10)), nil, 0o600))

	// Concurrent instances of one server share its uid.
	var wg sync.WaitGroup
	ids := make([]uint32, 8)
	errs := make([]error, len(ids))
	for i := range ids {
		wg.Go(func() { ids[i], errs[i] = leaseDynamicID(b, "b") })
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != idB {
			t.Errorf("instance %d of b: uid %d (%v), want b's %d", i, ids[i], errs[i], idB)
		}
	}
	got, err := os.ReadFile(filepath.Join(reg, strconv.FormatUint(uint64(idB), 10)))
	if err != nil || string(got) != b.String()+"\nb\n" {
		t.Errorf("b's entry: %q %v", got, err)
	}
	if left, _ := filepath.Glob(filepath.Join(reg, ".new-*")); len(left) > 0 {
		t.Errorf("entries written aside were left: %v", left)
	}
}

func TestDynamicUIDRegistryOthersCouldChangeIsRefused(t *testing.T) {
	idmapRequireRoot(t)
	reg := identityUseRegistry(t)
	key := identityOf(t, sbxSpec("/bin/true"))
	for name, setup := range map[string]func() error{
		"a file":             func() error { return os.WriteFile(reg, nil, 0o600) },
		"writable by others": func() error { return errors.Join(os.Mkdir(reg, 0o700), os.Chmod(reg, 0o777)) },
		"a user's":           func() error { return errors.Join(os.Mkdir(reg, 0o700), os.Chown(reg, idmapOwnerUID, idmapOwnerGID)) },
	} {
		os.RemoveAll(reg)
		if err := setup(); err != nil {
			t.Fatal(err)
		}
		_, err := leaseDynamicID(key, "x")
		var fe *field.Error
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), reg) || !strings.Contains(fe.Fix, "{User}") {
			t.Errorf("a registry that is %s: %v; want a field.Error naming it and the fix", name, err)
			continue
		}
		t.Logf("%s: %v", name, err)
		c := checkServerIdentity(true)
		if c.OK || !strings.Contains(c.Detail, reg) || c.Fix == "" {
			t.Errorf("doctor on a registry that is %s: %+v", name, c)
		}
	}
}

// TestServersWithTheSameCommandNameDoNotShareAUID: every `node
// dist/index.js` server is called "node"; each must still be a uid of its
// own, kept across restarts, that others cannot read the files of.
func TestServersWithTheSameCommandNameDoNotShareAUID(t *testing.T) {
	idmapRequireRoot(t)
	requireConfinement(t)
	// A grant both servers share, root's and open to all (as /srv/shared
	// might be): not idmapped, so files in it are their creators' uids'.
	shared := testenv.SharedDir(t, "mcpsandbox-identity-")
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	other := testenv.SharedDir(t, "mcpsandbox-identity-other-")
	secret := filepath.Join(shared, "token")
	server := func(script string, ro ...string) Spec {
		s := sbxSpec()
		s.Name = "node" // what launch names both
		s.ReadWrite, s.ReadOnly = []string{shared}, ro
		s.Args = []string{"/bin/sh", "-c", script}
		return s
	}
	write := fmt.Sprintf(`umask 077; [ -e %[1]s ] || echo "first's token" > %[1]s; id -u; cat %[1]s`, secret)
	first := server(write)
	uid1 := strings.Fields(sbxShell(t, first, first.Args[2]))
	if len(uid1) == 0 || idmapOwner(t, secret) != uid1[0]+":"+uid1[0] {
		t.Fatalf("the first server (uid %v) did not leave its 0600 file as its own: owner %s", uid1, idmapOwner(t, secret))
	}
	// A restart: the same uid, and its file is still its own.
	if again := sbxShell(t, first, first.Args[2]); !strings.HasPrefix(again, uid1[0]+"\nfirst's token") {
		t.Errorf("restarted, the first server says %q; want uid %s reading its own file", again, uid1[0])
	}
	read := fmt.Sprintf(`id -u; cat %s 2>&1 || true`, secret)
	for name, spec := range map[string]Spec{
		"another script":        server(read + " # another"),
		"the same, more grants": server(read, other),
	} {
		out := sbxShell(t, spec, spec.Args[2])
		lines := strings.SplitN(out, "\n", 2)
		if lines[0] == uid1[0] {
			t.Errorf("%s: the same uid %s as the first server", name, lines[0])
		}
		if strings.Contains(out, "first's token") || !strings.Contains(out, "Permission denied") {
			t.Errorf("%s (uid %s) read the first server's 0600 file: %q", name, lines[0], out)
		}
	}
}
