package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runToEnd runs `mcpsandbox run ARGS` for a host that stays connected
// until run ends: the server is to exit by itself.
func runToEnd(t *testing.T, args ...string) (stderr string, err error) {
	t.Helper()
	cmd := exec.Command(self(t), append([]string{asCLI, "run"}, args...)...)
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &errOut
	hostIn, err := cmd.StdinPipe() // open until run ends: the host stays
	if err != nil {
		t.Fatal(err)
	}
	defer hostIn.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("run did not end after its server exited; stderr:\n%s", &errOut)
	}
	return errOut.String(), err
}

// projectServer is a project whose program is bin/server, a script that
// writes the file written beside bin/ and exits.
func projectServer(t *testing.T) (proj, server string) {
	proj = t.TempDir()
	server = writeFile(t, proj, "server", "#!/bin/sh\necho ok > \"$(dirname \"$0\")/../written\"\n")
	if err := os.Mkdir(filepath.Join(proj, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(server, filepath.Join(proj, "bin", "server")); err != nil {
		t.Fatal(err)
	}
	server = filepath.Join(proj, "bin", "server")
	// Readable, executable and writable by the server's own uid, as a
	// user's project is by the user.
	for path, mode := range map[string]os.FileMode{proj: 0o777, filepath.Dir(server): 0o755, server: 0o755} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	return proj, server
}

// `run --rw ~/proj -- ~/proj/bin/server` starts: the user's grant takes
// the place of the automatic read-only grant of the program's directory
// (the sandbox refused the two as given both as --ro and --rw), and
// explain says so.
func TestUsersGrantWinsOverTheAutomaticOne(t *testing.T) {
	proj, server := projectServer(t)
	e := explain(t, "--rw", proj, "--", server)
	want := "(--rw) — covers the automatic read-only grant of the program's directory, " + filepath.Join(proj, "bin")
	if why, ok := e.grantedAs("rw", proj); !ok || why != want {
		t.Errorf("explain does not show --rw %s covering the program's directory:\n%s", proj, e.text("Mounts"))
	}
	if g := e.grants(); len(g["ro"]) != 0 {
		t.Errorf("explain lists read-only grants %q beside --rw", g["ro"])
	}

	requireConfinement(t)
	stderr, err := runToEnd(t, "--restart", "never", "--rw", proj, "--", server)
	if data, rerr := os.ReadFile(filepath.Join(proj, "written")); rerr != nil || strings.TrimSpace(string(data)) != "ok" {
		t.Errorf("the server did not write in its --rw project (%v; run: %v); stderr:\n%s", rerr, err, stderr)
	}
	if strings.Contains(stderr, "both") {
		t.Errorf("run refused the grants:\n%s", stderr)
	}
}
