package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3"
)

// Egress capture seen from inside: the test binary runs confined with
// NetEgress as the egress probe (sbxEgressEnv), tries each destination of
// egressProbes and reports what happened, while this side serves the
// listeners itself (egressEcho), answering each connection with the
// address it was accepted on.

const (
	sbxEgressEnv        = "MCPSANDBOX_SBX_EGRESS"        // the probes to run, comma-separated
	sbxEgressZygoteEnv  = "MCPSANDBOX_SBX_EGRESS_ZYGOTE" // the supervisor role with a pre-forked init stage
	egressProbeDeadline = 10 * time.Second
)

// Test addresses are documentation ranges only, and the synthetic range.
var egressCapture = CaptureSpec{
	Ports: []uint16{443, 8443},
	Local: []netip.Prefix{
		netip.MustParsePrefix("198.18.0.0/15"),
		netip.MustParsePrefix("198.51.100.0/24"),
		netip.MustParsePrefix("2001:db8:1::/48"),
	},
}

// egressProbes are what the server tries, and what it must see.
var egressProbes = map[string]string{
	"tcp 198.18.0.5:443":      "landed 198.18.0.5:443",
	"tcp 198.51.100.7:8443":   "landed 198.51.100.7:8443",
	"tcp [2001:db8:1::5]:443": "landed [2001:db8:1::5]:443",
	"tcp 198.18.0.5:444":      "connection refused", // captured address, port not captured
	"tcp 192.0.2.1:443":       "permission denied",  // not captured: the prohibit route
	"tcp 203.0.113.5:80":      "permission denied",
	"tcp [2001:db8::1]:443":   "permission denied",
	"tcp 127.0.0.1:53":        "landed 127.0.0.1:53", // the stub's TCP side
	"udp 127.0.0.1:53":        "answered dns:probe",
	"udp 198.18.0.5:443":      "connection refused", // captured address, but only TCP is listened for
	"udp 192.0.2.1:53":        "permission denied",
	"udp 203.0.113.5:123":     "permission denied",
	"loopback":                "ok", // its own listener on 127.0.0.1
}

func egressProbeList() string { return probeList(egressProbes) }

func probeList(probes map[string]string) string {
	var l []string
	for p := range probes {
		l = append(l, p)
	}
	return strings.Join(l, ",")
}

// runSbxEgressProbe is the server: it runs each probe and prints the
// outcomes as JSON.
func runSbxEgressProbe() int {
	res := map[string]string{}
	for _, p := range strings.Split(os.Getenv(sbxEgressEnv), ",") {
		res[p] = egressProbe(p)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return 1
	}
	return 0
}

func egressProbe(p string) string {
	kind, addr, _ := strings.Cut(p, " ")
	switch kind {
	case "tcp":
		c, err := net.DialTimeout("tcp", addr, egressProbeDeadline)
		if err != nil {
			return errnoText(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(egressProbeDeadline))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return "connected, then " + err.Error()
		}
		return "landed " + strings.TrimSpace(line)
	case "udp":
		c, err := net.Dial("udp", addr)
		if err != nil {
			return errnoText(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(egressProbeDeadline))
		if _, err := c.Write([]byte("probe")); err != nil {
			return errnoText(err)
		}
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		if err != nil {
			return errnoText(err)
		}
		return "answered " + string(buf[:n])
	case "loopback":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "listen: " + errnoText(err)
		}
		defer l.Close()
		go func() {
			if c, err := l.Accept(); err == nil {
				c.Write([]byte("ok\n"))
				c.Close()
			}
		}()
		c, err := net.DialTimeout("tcp", l.Addr().String(), egressProbeDeadline)
		if err != nil {
			return "dial: " + errnoText(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(egressProbeDeadline))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return "read: " + err.Error()
		}
		return strings.TrimSpace(line)
	}
	return "unknown probe"
}

// errnoText is the system error alone ("permission denied"), so that a
// timeout or anything else shows as itself.
func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// egressEcho serves the listeners as the test's egress side: every TCP
// connection is answered with the address it was accepted on, every DNS
// datagram with "dns:" and itself.
type egressEcho struct {
	mu     sync.Mutex
	served []Listeners
}

func (e *egressEcho) serve(l Listeners) error {
	e.mu.Lock()
	e.served = append(e.served, l)
	e.mu.Unlock()
	answer := func(ln net.Listener) {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "%s\n", c.LocalAddr())
			c.Close()
		}
	}
	for _, t := range l.TCP {
		go answer(t)
	}
	go answer(l.DNSTCP)
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := l.DNS.ReadFrom(buf)
			if err != nil {
				return
			}
			l.DNS.WriteTo(append([]byte("dns:"), buf[:n]...), from)
		}
	}()
	return nil
}

func (e *egressEcho) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range e.served {
		l.close()
	}
}

// egressSpec runs the probe confined with egress capture served by e.
func egressSpec(e *egressEcho) Spec {
	spec := sbxSpec(os.Args[0])
	spec.Env = []string{sbxEgressEnv + "=" + egressProbeList()}
	spec.Net, spec.Capture, spec.Egress = NetEgress, egressCapture, e.serve
	return spec
}

// checkEgressProbes compares the probe's report with egressProbes.
func checkEgressProbes(t *testing.T, out string) {
	t.Helper()
	checkProbes(t, out, egressProbes)
}

// checkProbes compares the probe's report with probes.
func checkProbes(t *testing.T, out string, probes map[string]string) {
	t.Helper()
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("probe output %q: %v", out, err)
	}
	for p, want := range probes {
		if got[p] != want {
			t.Errorf("%s: %q, want %q", p, got[p], want)
		}
	}
}

// Through the exec'd init stage: captured destinations land on the
// supervisor's listeners with the dialled address, the others fail at
// connect, DNS reaches the stub and the server keeps its own loopback.
func TestConfinedEgressCapturesAndRefusesAtConnect(t *testing.T) {
	requireConfinement(t)
	e := &egressEcho{}
	defer e.close()
	out, errOut, ex := sbxRun(t, egressSpec(e))
	if ex.Failed() {
		t.Fatalf("probe: %v\nstderr:\n%s", ex, errOut)
	}
	checkEgressProbes(t, out)
	if len(e.served) != 1 {
		t.Errorf("Egress was called %d times for one start", len(e.served))
	}
	l := e.served[0]
	if len(l.TCP) != 4 {
		t.Errorf("%d TCP listeners, want one per port and family (4)", len(l.TCP))
	}
}

// The server's resolv.conf names the stub, and AF_INET is allowed.
func TestConfinedEgressResolvConfNamesTheStub(t *testing.T) {
	requireConfinement(t)
	e := &egressEcho{}
	defer e.close()
	spec := egressSpec(e)
	spec.Env = nil
	out := sbxShell(t, spec, "cat /etc/resolv.conf; echo; cat /etc/hosts")
	resolv, hosts, _ := strings.Cut(out, "\n\n")
	if resolv != "nameserver 127.0.0.1" {
		t.Errorf("resolv.conf: %q, want the stub alone", resolv)
	}
	if !strings.HasPrefix(hosts, "127.0.0.1\tlocalhost") {
		t.Errorf("hosts: %q, want loopback's names", hosts)
	}
}

// An Egress function that fails fails the start, and the server never
// runs: the same server with an Egress that serves leaves its mark.
func TestConfinedEgressFailingServeStopsTheStart(t *testing.T) {
	requireConfinement(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(dir, "ran")
	e := &egressEcho{}
	defer e.close()
	spec := egressSpec(e)
	spec.Env = nil
	spec.ReadWrite = []string{dir}
	sbxShell(t, spec, "touch "+mark)
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the server with a serving Egress left no mark: %v", err)
	}
	os.Remove(mark)

	spec.Args = []string{"/bin/sh", "-c", "touch " + mark}
	var handed Listeners
	spec.Egress = func(l Listeners) error {
		handed = l
		return errors.New("the proxy is closed")
	}
	p, err := Start(spec, sbxLogger(t))
	if err == nil {
		p.Close()
		t.Fatal("Start succeeded though Egress failed")
	}
	if msg := err.Error(); !strings.Contains(msg, "the proxy is closed") || !strings.Contains(msg, "not started") {
		t.Errorf("error %q does not say Egress failed and the server did not start", msg)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the server ran though Egress failed")
	}
	if handed.DNS == nil {
		t.Fatal("Egress was not called")
	}
	if err := handed.DNS.SetReadDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the listeners of a failed start are still open (%v)", err)
	}
}

// A role hook in init, as zygote_test.go's: the supervisor must start
// before TestMain, as `<bin> run ...`, so that zygote.c pre-forks.
func init() {
	if os.Getenv(sbxEgressZygoteEnv) != "" && len(os.Args) > 1 && os.Args[1] == "run" {
		os.Exit(sbxEgressZygoteRole())
	}
}

func sbxEgressZygoteRole() int {
	e := &egressEcho{}
	defer e.close()
	if os.Getenv(sbxEgressZygoteEnv) == "resolver" {
		return runZygoteRole(resolverSpec(e), zygoteRoleResult{})
	}
	return runZygoteRole(egressSpec(e), zygoteRoleResult{})
}

// The pre-forked init stage hands over its sockets as the exec'd one does.
func TestConfinedEgressPreforkedInitStage(t *testing.T) {
	requireConfinement(t)
	if cgroups.Mode() == cgroups.Unified {
		t.Skip("no init stage is pre-forked on cgroup v2: it must start inside its cgroup (CLONE_INTO_CGROUP)")
	}
	checkEgressProbes(t, preforkedProbe(t, "1", "--net", "egress"))
}

// preforkedProbe runs the probe under a supervisor whose init stage was
// pre-forked (the role chosen by role, with the run flags given), and
// returns its report.
func preforkedProbe(t *testing.T, role string, flags ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append(append([]string{"run"}, flags...), "--", "server")...)
	cmd.Env = append(os.Environ(), sbxEgressZygoteEnv+"="+role)
	res := zygoteRoleOutput(t, cmd)
	if !res.Preforked {
		t.Fatalf("the pre-forked init stage was not adopted (%s)", res.Err)
	}
	if res.Exit != "exited with status 0" {
		t.Fatalf("probe %s\nstderr: %s", res.Exit, res.Err)
	}
	return res.Out
}
