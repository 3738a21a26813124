package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// programScript tries, as it starts, to rewrite itself on the host in
// every way a writable grant might allow, says what it got, and exits.
const programScript = `const fs = require('fs'), path = require('path');
const me = __filename, lib = path.dirname(me);
const tried = [];
const attempt = (what, f) => { try { f(); tried.push(what + ' done'); } catch (e) { tried.push(what + ' ' + e.code); } };
attempt('write', () => fs.appendFileSync(me, '// rewritten\n'));
attempt('rename-over', () => { fs.writeFileSync(me + '.new', '// rewritten\n'); fs.renameSync(me + '.new', me); });
attempt('remove', () => fs.unlinkSync(me));
attempt('move-dir', () => { fs.renameSync(lib, lib + '.aside'); fs.mkdirSync(lib); fs.writeFileSync(me, '// rewritten\n'); });
console.error('tried: ' + tried.join(', '));
`

// `run --rw DIR -- node DIR/lib/server.js`: the server can write in DIR,
// but its own script stays as it was on the host, however it tries; the
// rest of DIR stays writable.
func TestRunKeepsTheServersScriptReadOnly(t *testing.T) {
	requireConfinement(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node: %v", err)
	}
	proj := t.TempDir()
	lib := filepath.Join(proj, "lib")
	if err := os.Mkdir(lib, 0o777); err != nil {
		t.Fatal(err)
	}
	script := writeFile(t, lib, "server.js", programScript)
	// Writable by the server's uid, as a user's project is by the user.
	for path, mode := range map[string]os.FileMode{proj: 0o777, lib: 0o777, script: 0o666} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	stderr, err := runToEnd(t, "--restart", "never", "--rw", proj, "--", node, script)
	if !strings.Contains(stderr, "tried: ") {
		t.Fatalf("the script did not run (%v); stderr:\n%s", err, stderr)
	}
	if data, err := os.ReadFile(script); err != nil || string(data) != programScript {
		t.Errorf("the server rewrote its script on the host (%v): %q\nstderr:\n%s", err, data, stderr)
	}
	if _, err := os.Stat(lib + ".aside"); err == nil {
		t.Errorf("the server moved its script's directory aside on the host; stderr:\n%s", stderr)
	}
	if _, err := os.Stat(script + ".new"); err != nil {
		t.Errorf("the server could not write beside its script in its --rw grant (%v); stderr:\n%s", err, stderr)
	}
}

// policy explain lists what keeps the program of `run --rw DIR --
// DIR/bin/server` as it is: the directory on the way and the file.
func TestExplainShowsTheProgramKeptInItsGrant(t *testing.T) {
	proj, server := projectServer(t)
	mounts := explain(t, "--rw", proj, "--", server).text("Mounts")
	for _, want := range []string{
		"pin   " + filepath.Join(proj, "bin") + "  (on the way to the program: cannot be moved aside or removed)",
		"pin   " + server + "  (the program, in a writable grant: read-only, cannot be replaced)",
	} {
		if !strings.Contains(mounts, want) {
			t.Errorf("explain does not show %q:\n%s", want, mounts)
		}
	}
}

// A hard link to the program elsewhere in the --rw grant is a way around
// the read-only program inside: the server writes its program through it,
// and exits. The restart refuses to run what it wrote, and says why.
func TestRunRefusesToRestartARewrittenProgram(t *testing.T) {
	requireConfinement(t)
	proj := t.TempDir()
	bin := filepath.Join(proj, "bin")
	if err := os.Mkdir(bin, 0o777); err != nil {
		t.Fatal(err)
	}
	server := writeFile(t, bin, "server", "#!/bin/sh\necho '# rewritten' >> \"$(dirname \"$0\")/../other\"\nexit 1\n")
	other := filepath.Join(proj, "other")
	if err := os.Link(server, other); err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{proj: 0o777, server: 0o777} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	// The host's initialize is answered with the reason once the restart
	// is refused.
	m, _, err := host(t, "", nil, nil, "mcpsandbox", "run", "--restart-backoff", "10ms..10ms", "--max-restarts", "1", "--rw", proj, "--", server)
	if err == nil {
		t.Fatalf("initialize succeeded with a server that exits at once; stderr:\n%s", m.stderr)
	}
	m.cmd.Process.Signal(syscall.SIGTERM) // its log is complete once it exits
	m.wait(t)
	stderr := m.stderr.String()
	if data, err := os.ReadFile(server); err != nil || !strings.Contains(string(data), "# rewritten") {
		t.Fatalf("the server did not write its program through the hard link (%v), so this tests nothing; stderr:\n%s", err, stderr)
	}
	want := "the server's program " + server + " changed on the host since mcpsandbox started it (it was written to or its mode changed)"
	if !strings.Contains(stderr, want) {
		t.Errorf("the restart does not refuse the rewritten program with %q; stderr:\n%s", want, stderr)
	}
	if n := strings.Count(stderr, "server started"); n != 1 {
		t.Errorf("the server was started %d times, want once; stderr:\n%s", n, stderr)
	}
}
