package sandbox

import (
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

func egressTestSpec() Spec {
	spec := sbxSpec("/bin/true")
	spec.Net = NetEgress
	spec.Capture = CaptureSpec{Ports: []uint16{443}, Local: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}}
	spec.Egress = func(Listeners) error { return nil }
	return spec
}

// A capture the sandbox cannot make, or one given with another network, is
// refused before anything starts, naming the field and the fix.
func TestEgressCaptureIsChecked(t *testing.T) {
	prefix := netip.MustParsePrefix
	for name, tc := range map[string]struct {
		edit func(*Spec)
		want []string
	}{
		"no Egress": {func(s *Spec) { s.Egress = nil }, []string{"Egress", "is not set", "Serve"}},
		"no range":  {func(s *Spec) { s.Capture.Local = nil }, []string{"Capture.Local", "names no address range", "198.18.0.0/15"}},
		"port 0":    {func(s *Spec) { s.Capture.Ports = []uint16{0} }, []string{"Capture.Ports 0", "1-65535"}},
		"port 53":   {func(s *Spec) { s.Capture.Ports = []uint16{443, 53} }, []string{"Capture.Ports 53", "DNS stub"}},
		"unmasked":  {func(s *Spec) { s.Capture.Local = []netip.Prefix{prefix("198.51.100.7/24")} }, []string{"Capture.Local 198.51.100.7/24", "give it as 198.51.100.0/24"}},
		"mapped":    {func(s *Spec) { s.Capture.Local = []netip.Prefix{prefix("::ffff:198.51.100.0/120")} }, []string{"IPv4-mapped", "198.51.100.0/24"}},
		"loopback":  {func(s *Spec) { s.Capture.Local = []netip.Prefix{prefix("127.0.0.0/8")} }, []string{"Capture.Local 127.0.0.0/8", "own loopback"}},
		"::1":       {func(s *Spec) { s.Capture.Local = []netip.Prefix{prefix("::1/128")} }, []string{"own loopback"}},
		"invalid":   {func(s *Spec) { s.Capture.Local = []netip.Prefix{{}} }, []string{"is not an address range"}},
		"too many ports": {func(s *Spec) {
			s.Capture.Local = append(s.Capture.Local, prefix("2001:db8:1::/48"))
			s.Capture.Ports = nil
			for p := range uint16(200) {
				s.Capture.Ports = append(s.Capture.Ports, 1000+p)
			}
		}, []string{"Capture.Ports 200 ports", "400 listeners", "fewer ports"}},
		"capture without egress": {func(s *Spec) { s.Net, s.Egress = NetNone, nil }, []string{"Capture", "only for NetEgress", "the network is none", "set Net to NetEgress"}},
		"egress func with host":  {func(s *Spec) { s.Net, s.Capture = NetHost, CaptureSpec{} }, []string{"Egress", "only for NetEgress", "the network is host"}},
	} {
		t.Run(name, func(t *testing.T) {
			spec := egressTestSpec()
			tc.edit(&spec)
			p, err := Start(spec, sbxLogger(t))
			if err == nil {
				p.Close()
				t.Fatal("started")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			d := Describe(spec)
			if name == "no Egress" {
				// Describing a server (policy explain) needs no one serving it.
				if len(d.Problems) != 0 {
					t.Errorf("Describe's problems %v, want none: who serves the listeners matters only to Start", d.Problems)
				}
				return
			}
			if len(d.Problems) == 0 || d.Problems[0].Error() != err.Error() {
				t.Errorf("Describe's problems %v, want Start's %q", d.Problems, err)
			}
		})
	}
}

// Ranges and ports given twice are captured once, and a range wider than
// loopback is fine: loopback's own routes are more specific.
func TestEgressCaptureTakesRepeatsAndWideRanges(t *testing.T) {
	spec := egressTestSpec()
	spec.Capture.Ports = []uint16{443, 80, 443}
	spec.Capture.Local = append(spec.Capture.Local, netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("0.0.0.0/0"))
	want, c, err := captureSockets(spec)
	if err != nil {
		t.Fatal(err)
	}
	if want.TCP4 != 2 || want.TCP6 != 0 || len(c.Ports) != 2 || len(c.Local) != 2 {
		t.Errorf("sockets %+v for capture %+v", want, c)
	}
}

// Describe names what egress captures and that the rest is refused.
func TestEgressDescribeShowsTheCapture(t *testing.T) {
	spec := egressTestSpec()
	spec.Capture.Ports = []uint16{443, 5432}
	spec.Capture.Local = append(spec.Capture.Local, netip.MustParsePrefix("203.0.113.0/24"))
	d := Describe(spec)
	if len(d.Problems) > 0 {
		t.Fatal(d.Problems)
	}
	for _, w := range []string{"egress: ", "127.0.0.1:53", "TCP ports 443, 5432 of 198.18.0.0/15, 203.0.113.0/24", "every other destination refused at connect"} {
		if !strings.Contains(d.Network, w) {
			t.Errorf("Network %q lacks %q", d.Network, w)
		}
	}
}

// The egress network is an identity of its own, and what it captures is
// not part of it: a server whose allowed hosts change keeps its uid. The
// key is pinned as this commit computes it, so that it stays.
func TestEgressIdentity(t *testing.T) {
	spec := egressTestSpec()
	spec.Args = []string{"/bin/sh", "-c", "exec node dist/index.js"}
	key := identityOf(t, spec)
	for _, net := range []Network{NetNone, NetHost} {
		other := spec
		other.Net, other.Capture, other.Egress = net, CaptureSpec{}, nil
		if identityOf(t, other) == key {
			t.Errorf("egress keys as %s", net)
		}
	}
	other := spec
	other.Capture = CaptureSpec{Ports: []uint16{5432}, Local: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")}}
	if identityOf(t, other) != key {
		t.Error("another capture changed the server's identity")
	}

	pinned := egressTestSpec()
	pinned.Args = []string{"/bin/sh", "-c", "exec node dist/index.js"}
	pinned.Env, pinned.Dir = []string{"API_URL=https://example.com"}, "/"
	cfg, err := newInitConfig(pinned)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Exe = "/usr/bin/dash" // wherever /bin/sh leads here
	if got, want := identityKey(cfg, pinned).String(), "39ea63bab75d628db57725d54c7fc1e430aa816ab2b88add31b1d923a053f88c"; got != want {
		t.Errorf("egress key %s, want %s: egress servers keyed before would lose their uid", got, want)
	}
}

// inFreshNetns runs f on a thread of its own in a network namespace made
// for it (root only); the thread is never handed back to the runtime, so it
// ends with f.
func inFreshNetns(t *testing.T, f func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a network namespace in the test process needs root")
	}
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // for good: the thread leaves with the namespace
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		f()
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// freshSockets makes what the init stage hands over, in this thread's
// network namespace (t.Fatal is not for f's thread: a failed socket is -1,
// and the capture fails on it).
func freshSockets(t *testing.T, tcp4 int) *initstage.Sockets {
	mk := func(domain, typ, proto int) int {
		fd, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
		if err != nil {
			t.Error(err)
			return -1
		}
		return fd
	}
	s := &initstage.Sockets{Netlink: mk(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE), DNS: mk(unix.AF_INET, unix.SOCK_DGRAM, 0), DNSTCP: mk(unix.AF_INET, unix.SOCK_STREAM, 0)}
	for range tcp4 {
		s.TCP4 = append(s.TCP4, mk(unix.AF_INET, unix.SOCK_STREAM, 0))
	}
	return s
}

// What the kernel refuses while configuring a namespace fails the capture
// with the step, the kernel's reason and what it means.
func TestEgressCaptureFailuresAreDiagnosed(t *testing.T) {
	c := CaptureSpec{Ports: []uint16{443}, Local: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}}
	var loDown, again error
	inFreshNetns(t, func() {
		s := freshSockets(t, 1)
		defer s.Close()
		_, loDown = openCapture(s, c)

		lo, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer unix.Close(lo)
		ifr, _ := unix.NewIfreq("lo")
		ifr.SetUint16(unix.IFF_UP)
		if err := unix.IoctlIfreq(lo, unix.SIOCSIFFLAGS, ifr); err != nil {
			t.Error(err)
			return
		}
		// The failed capture left its routes: the next one finds them.
		s2 := freshSockets(t, 1)
		defer s2.Close()
		_, again = openCapture(s2, c)
	})
	if loDown == nil || !strings.Contains(loDown.Error(), "lo is not up") {
		t.Errorf("capture with lo down: %v, want the diagnosis that lo is not up", loDown)
	}
	if again == nil || !strings.Contains(again.Error(), "adding the local route for 198.18.0.0/15") || !strings.Contains(again.Error(), "file exists") {
		t.Errorf("capture of a namespace configured already: %v, want the route the kernel refused", again)
	}
}
