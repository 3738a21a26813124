package sandbox

import (
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// sbxHostListener listens on a unix socket at path as a host program
// would, in a directory the server may enter.
func sbxHostListener(t *testing.T, path string) net.Listener {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(path), 0o777)
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o777) // the server's uid is not the test's
	t.Cleanup(func() { l.Close() })
	return l
}

// Sockets host programs listen on in a grant when the server starts are
// masked, in read-write and read-only grants and nested directories: the
// server's connect is refused, no listener sees a connection, and
// Describe (policy explain) names each.
func TestConfinedGrantSocketsAreMasked(t *testing.T) {
	requireConfinement(t)
	rw, ro := t.TempDir(), t.TempDir()
	os.Chmod(rw, 0o777)
	os.Chmod(ro, 0o755)
	os.Chmod(filepath.Dir(rw), 0o755)
	sockets := []string{
		filepath.Join(rw, "dev-server.sock"),
		filepath.Join(rw, "project", ".cache", "agent.sock"),
		filepath.Join(ro, "docker.sock"),
	}
	var listeners []net.Listener
	for _, s := range sockets {
		listeners = append(listeners, sbxHostListener(t, s))
	}
	spec := sbxSpec(os.Args[0])
	spec.ReadOnly, spec.ReadWrite = []string{ro}, []string{rw}

	d := Describe(spec)
	var masked []string
	for _, m := range d.Mounts {
		if m.Kind == Masked {
			masked = append(masked, m.Path)
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(masked)), slices.Sorted(slices.Values(sockets))) {
		t.Errorf("Describe masks %v, want %v", masked, sockets)
	}
	if d.SocketSearchCut != "" {
		t.Errorf("Describe says the search stopped: %s", d.SocketSearchCut)
	}

	f := sbxProbe(t, spec, sbxDialEnv+"="+strings.Join(sockets, ","))
	for i, s := range sockets {
		if e := f.Dial[s]; !strings.Contains(e, "connection refused") {
			t.Errorf("connecting to %s inside: %q, want connection refused", s, e)
		}
		escapeNoConnection(t, s, listeners[i])
	}
}

// The reason read-only grants are searched too: connect(2) is not a write
// to the file system, so a read-only bind does not stop it. A socket the
// user grants by itself is the user's wish and is not masked.
func TestConfinedSocketGrantedByItselfConnects(t *testing.T) {
	requireConfinement(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755)
	sock := filepath.Join(dir, "wanted.sock")
	l := sbxHostListener(t, sock)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	spec := sbxSpec(os.Args[0])
	spec.ReadOnly = []string{sock}
	d := Describe(spec)
	if len(d.Mounts) == 0 || len(d.Problems) > 0 {
		t.Fatalf("Describe: %+v", d)
	}
	for _, m := range d.Mounts {
		if m.Kind == Masked {
			t.Errorf("Describe masks %s, which the user granted", m.Path)
		}
	}
	if e := sbxProbe(t, spec, sbxDialEnv+"="+sock).Dial[sock]; e != "" {
		t.Errorf("connecting through the read-only grant of %s: %s, want a connection", sock, e)
	}
}

// A documented limit (doctor, README): a socket a host program makes in a
// grant after the server started is not masked and the server can
// connect to it. If this starts to fail, the limit is gone: update doctor
// and README.
func TestConfinedGrantSocketMadeAfterTheStartIsReachable(t *testing.T) {
	requireConfinement(t)
	rw := t.TempDir()
	os.Chmod(rw, 0o777)
	os.Chmod(filepath.Dir(rw), 0o755)
	sock := filepath.Join(rw, "later.sock")
	spec := sbxSpec(os.Args[0])
	spec.ReadWrite = []string{rw}
	spec.Env = []string{sbxProbeEnv + "=1", sbxAwaitEnv + "=1", sbxDialEnv + "=" + sock}
	p, err := Start(spec, sbxLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	collected := sbxCollect(p)
	l := sbxHostListener(t, sock)
	accepted := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			c.Close()
		}
		accepted <- err
	}()
	io.WriteString(p.Stdin(), "go\n")
	p.Stdin().Close()
	select {
	case <-p.Done():
	case <-time.After(60 * time.Second):
		p.Kill()
		t.Fatal("the probe did not finish")
	}
	out, errOut := collected()
	var f sbxFacts
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("probe output: %v\n%s\n%s", err, out, errOut)
	}
	if e := f.Dial[sock]; e != "" {
		t.Fatalf("connecting to a socket made after the start: %s: the documented limit is gone", e)
	}
	if err := <-accepted; err != nil {
		t.Fatalf("the host listener: %v", err)
	}
}
