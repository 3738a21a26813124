package launch

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policies"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// TestConfinedNVMNode runs node from a fake nvm installation in a home
// directory through the real sandbox, with the policy built as run builds
// it: the installation is granted, the rest of the home is not there.
func TestConfinedNVMNode(t *testing.T) {
	testenv.RequireConfinement(t, func() error { return sandbox.Doctor().Problem(field.Plain) })
	// The server's uid must be able to read the installation, as under a
	// real home; t.TempDir's directories are the test's alone.
	base, err := os.MkdirTemp("", "launch-nvm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	root := fakeNVM(t, home)
	secret := filepath.Join(home, "secret.txt")
	write(t, secret, "SECRET-of-the-home", 0o644)
	// As a user with nvm has it: its bin first on mcpsandbox's own PATH.
	t.Setenv("PATH", filepath.Join(root, "bin")+":"+os.Getenv("PATH"))

	h := FromProcess()
	h.Home = home
	code := `const fs = require("fs");
console.log("exec " + process.execPath);
console.log("version " + process.version);
try { console.log("read " + fs.readFileSync(process.argv[1], "utf8")); } catch (e) { console.log("refused " + e.code); }
try { console.log("home holds " + fs.readdirSync(process.argv[2]).join(",")); } catch (e) { console.log("home " + e.code); }`
	l := Read([]string{"node", "-e", code, secret, home}, builtins(t), h)
	if l.Choice.Policy != "node" {
		t.Fatalf("chose %s (%s)", l.Choice.Policy, l.Choice.Why)
	}
	p, _, err := policy.Loader{Builtin: policies.FS, Vars: l.Vars}.Load(l.Choice.Policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Apply(&p); err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	out, errOut := runConfined(t, l.Name, p)
	t.Logf("inside:\n%s\nstderr: %s", out, errOut)

	if !strings.Contains(out, "exec "+filepath.Join(root, "bin", "node")+"\n") {
		t.Errorf("node inside is not the nvm copy %s/bin/node:\n%s", root, out)
	}
	if !strings.Contains(out, "version v") {
		t.Errorf("node did not run inside:\n%s", out)
	}
	if strings.Contains(out, "SECRET") || !strings.Contains(out, "refused ENOENT") {
		t.Errorf("the home's secret.txt was readable, or not refused as absent:\n%s", out)
	}
	// The home directory is there only as the way to the grant.
	if strings.Contains(out, "home holds") && !strings.Contains(out, "home holds .nvm\n") {
		t.Errorf("the home directory holds more than the way to the grant inside:\n%s", out)
	}
}

// runConfined starts p's command in the sandbox with the spec the
// supervisor makes of a policy (supervisor.SpecOf) and returns
// what it wrote once it has exited.
func runConfined(t *testing.T, name string, p policy.Policy) (stdout, stderr string) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(testenv.NewLogCapture(t), nil))
	net := sandbox.NetNone
	if p.Net == policy.NetHost {
		net = sandbox.NetHost
	}
	proc, err := sandbox.Start(sandbox.Spec{
		Name: name, Args: p.Command, Env: p.Env, Dir: p.WorkDir, Tmpfs: p.Tmpfs,
		ReadOnly: p.ReadOnly, ReadWrite: p.ReadWrite, TmpSize: int64(p.TmpSize),
		Net: net, User: p.User, NoFile: p.NoFile, FileSize: int64(p.FileSize),
		NoExecTmp: p.NoExecTmp, Seccomp: p.Seccomp, SeccompLog: p.SeccompLog,
		Memory: int64(p.Memory), Pids: p.Pids, CPU: p.CPU,
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Close()
	proc.Stdin().Close()
	errc := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(proc.Stderr())
		errc <- b
	}()
	b, err := io.ReadAll(proc.Stdout())
	if err != nil {
		t.Fatal(err)
	}
	<-proc.Done()
	e := <-errc
	if ex := proc.Exit(); ex.Failed() {
		t.Fatalf("the server %s\nstdout: %s\nstderr: %s", ex, b, e)
	}
	return string(b), string(e)
}

// TestConfinedMergedUsr: a program named through /bin, a link to usr/bin
// on a merged /usr, starts under the default policy: it needs no grant,
// and a grant of /bin would be refused (the sandbox follows no link).
func TestConfinedMergedUsr(t *testing.T) {
	testenv.RequireConfinement(t, func() error { return sandbox.Doctor().Problem(field.Plain) })
	if fi, err := os.Lstat("/bin"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Skip("/bin is no link here (no merged /usr)")
	}
	l := Read([]string{"/bin/sh", "-c", "echo ran"}, builtins(t), FromProcess())
	p := policy.Default()
	if err := l.Apply(&p); err != nil {
		t.Fatal(err)
	}
	if out, _ := runConfined(t, l.Name, p); out != "ran\n" {
		t.Errorf("/bin/sh inside wrote %q", out)
	}
}

// TestConfinedPyenv: python3 on this machine's PATH is a pyenv shim; the
// interpreter it leads to runs inside, with its installation granted.
func TestConfinedPyenv(t *testing.T) {
	testenv.RequireConfinement(t, func() error { return sandbox.Doctor().Problem(field.Plain) })
	l := Read([]string{"python3", "-c", "import sys, json; print(sys.executable, sys.version_info[0])"}, builtins(t), FromProcess())
	if l.Runtime.Shim == "" {
		t.Skipf("python3 is no version manager's shim here (%+v, %v)", l.Runtime, l.RuntimeErr)
	}
	p, _, err := policy.Loader{Builtin: policies.FS, Vars: l.Vars}.Load(l.Choice.Policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Apply(&p); err != nil {
		t.Fatal(err)
	}
	if out, _ := runConfined(t, l.Name, p); out != l.Runtime.Exe+" 3\n" {
		t.Errorf("inside: %q, want %s running", out, l.Runtime.Exe)
	}
}
