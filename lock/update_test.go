package lock

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/contract"
)

// updaterEnv makes the test binary a process that adds servers to a lock
// (see TestMain), so that Update's lock is tried across processes.
const updaterEnv = "MCPSANDBOX_LOCK_TEST_UPDATER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(updaterEnv); spec != "" {
		var path, prefix string
		var n int
		fmt.Sscanf(spec, "%s %s %d", &path, &prefix, &n)
		if err := addServers(path, prefix, n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// addServers adds n servers, one Update each, each with a tool of its own.
func addServers(path, prefix string, n int) error {
	for i := range n {
		id := fmt.Sprintf("%s-%d", prefix, i)
		it, err := contract.NewItem(contract.Tool, "t", []byte(`{"name":"t","description":`+strconv.Quote(id)+`}`))
		if err != nil {
			return err
		}
		err = Update(path, func(f *File) error {
			s := &Server{Name: id}
			s.Contract.Put(it, Entry{})
			f.Servers[id] = s
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// TestConcurrentUpdatesLoseNoServer has goroutines (each Update opens the
// lock file of its own, and flock locks per open file) and processes add
// servers to one lock at once: every one of them is in it afterwards.
func TestConcurrentUpdatesLoseNoServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "lock.json")
	const goroutines, processes, each = 4, 3, 10
	var wg sync.WaitGroup
	errs := make(chan error, goroutines+processes)
	for g := range goroutines {
		wg.Go(func() { errs <- addServers(path, fmt.Sprintf("goroutine%d", g), each) })
	}
	for p := range processes {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s process%d %d", updaterEnv, path, p, each))
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("updater process: %v: %s", err, out)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(f.Servers), (goroutines+processes)*each; got != want {
		t.Errorf("%d servers in the lock, want %d", got, want)
	}
	for _, id := range f.IDs() {
		if it, ok := f.Servers[id].Contract.Get(contract.Tool, "t"); !ok || string(it.Text) != `{"description":`+strconv.Quote(id)+`,"name":"t"}` {
			t.Errorf("%s: tool %s", id, it.Text)
		}
	}
	for name, want := range map[string]os.FileMode{path: 0o644, filepath.Dir(path): 0o755 | os.ModeDir} {
		if fi, err := os.Stat(name); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v (%v)", name, fi.Mode(), want, err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".lock.json.*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestUpdateLeavesTheLockAsItWasOnError(t *testing.T) {
	good := sample(t).Marshal()
	path := writeFile(t, good)
	refused := errors.New("not approved")
	if err := Update(path, func(f *File) error { delete(f.Servers, "npm+@modelcontextprotocol+server-everything"); return refused }); err != refused {
		t.Errorf("Update = %v, want fn's error", err)
	}
	broken := append([]byte(nil), good[:len(good)-3]...)
	os.WriteFile(path, broken, 0o644)
	called := false
	err := Update(path, func(*File) error { called = true; return nil })
	var le *Error
	if !errors.As(err, &le) || called {
		t.Errorf("Update of a broken lock = %v (fn called: %v), want its *lock.Error before fn", err, called)
	}
	if got, _ := os.ReadFile(path); string(got) != string(broken) {
		t.Error("Update rewrote a lock it could not read")
	}
}

func TestPaths(t *testing.T) {
	for config, want := range map[string]string{
		"/etc/mcpsandbox/daemon.json":      "/etc/mcpsandbox/daemon.lock.json",
		"/home/u/.config/mcpsandbox/d.yml": "/home/u/.config/mcpsandbox/d.lock.json",
		"/srv/v1.2/daemon":                 "/srv/v1.2/daemon.lock.json",
	} {
		if got := BesideConfig(config); got != want {
			t.Errorf("BesideConfig(%s) = %s, want %s", config, got, want)
		}
	}
	if got, err := defaultPathFor(0); got != "/etc/mcpsandbox/lock.json" || err != nil {
		t.Errorf("DefaultPath() as root = %s, %v", got, err)
	}
	t.Setenv("XDG_CONFIG_HOME", "/x/config")
	if got, err := defaultPathFor(1000); got != "/x/config/mcpsandbox/lock.json" || err != nil {
		t.Errorf("DefaultPath() with $XDG_CONFIG_HOME = %s, %v", got, err)
	}
	t.Setenv("XDG_CONFIG_HOME", "relative")
	t.Setenv("HOME", "/home/u")
	if got, err := defaultPathFor(1000); got != "/home/u/.config/mcpsandbox/lock.json" || err != nil {
		t.Errorf("DefaultPath() without $XDG_CONFIG_HOME = %s, %v", got, err)
	}
}
