package initstage

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// netnsOf is the inode of the network namespace socket fd belongs to.
func netnsOf(t *testing.T, fd int) uint64 {
	t.Helper()
	ns, err := unix.IoctlRetInt(fd, unix.SIOCGSKNS)
	if err != nil {
		t.Fatalf("SIOCGSKNS: %v", err)
	}
	defer unix.Close(ns)
	var st unix.Stat_t
	if err := unix.Fstat(ns, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

func nsInode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// With egress capture the init stage hands over, before it builds the rest,
// a netlink socket, the DNS stub's two and the TCP listeners asked for, all
// made in its own network namespace and none in the supervisor's.
func TestInitStageHandsOverEgressSocketsOfItsNetworkNamespace(t *testing.T) {
	cfg := testConfig(t, "/bin/true")
	cfg.Egress = &EgressSockets{TCP4: 2, TCP6: 1}
	sup, stage, err := EgressPair()
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	msg, err := cfg.Encode()
	if err != nil {
		t.Fatal(err)
	}
	cmd, _ := startInitStageWith(t, cfg, stage, func(w *os.File) { msg.Send(w) })
	stage.Close()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()

	socks, err := ReceiveSockets(sup, *cfg.Egress, time.Now().Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer socks.Close()
	stageNet := nsInode(t, fmt.Sprintf("/proc/%d/ns/net", cmd.Process.Pid))
	if own := nsInode(t, "/proc/self/ns/net"); own == stageNet {
		t.Fatal("the init stage shares this process's network namespace")
	}
	want := []struct {
		fd          int
		domain, typ int
		what        string
	}{
		{socks.Netlink, unix.AF_NETLINK, unix.SOCK_RAW, "netlink"},
		{socks.DNS, unix.AF_INET, unix.SOCK_DGRAM, "DNS udp"},
		{socks.DNSTCP, unix.AF_INET, unix.SOCK_STREAM, "DNS tcp"},
		{socks.TCP4[0], unix.AF_INET, unix.SOCK_STREAM, "tcp4 #0"},
		{socks.TCP4[1], unix.AF_INET, unix.SOCK_STREAM, "tcp4 #1"},
		{socks.TCP6[0], unix.AF_INET6, unix.SOCK_STREAM, "tcp6 #0"},
	}
	for _, w := range want {
		domain, _ := unix.GetsockoptInt(w.fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
		typ, _ := unix.GetsockoptInt(w.fd, unix.SOL_SOCKET, unix.SO_TYPE)
		if domain != w.domain || typ != w.typ {
			t.Errorf("%s: domain %d type %d, want %d %d", w.what, domain, typ, w.domain, w.typ)
		}
		if ns := netnsOf(t, w.fd); ns != stageNet {
			t.Errorf("%s belongs to network namespace %d, want the init stage's %d", w.what, ns, stageNet)
		}
	}
}

// Asked for egress capture without the descriptor to hand over on, the
// init stage fails and says so.
func TestInitStageRefusesEgressWithoutTheHandOverSocket(t *testing.T) {
	cfg := testConfig(t, "/bin/true")
	cfg.Egress = &EgressSockets{TCP4: 1}
	msg, err := cfg.Encode()
	if err != nil {
		t.Fatal(err)
	}
	rep := initStageReport(t, func(w *os.File) { msg.Send(w) })
	if !strings.Contains(rep.Error, "egress capture: the supervisor passed no socket") {
		t.Errorf("report %q", rep.Error)
	}
}

// startInitStageWith is startInitStage with the egress hand-over end as
// fd 5.
func startInitStageWith(t *testing.T, cfg *Config, egress *os.File, feed func(w *os.File)) (*exec.Cmd, *os.File) {
	t.Helper()
	cmd, cfgW, repR := execInitStage(t, cfg, nil, egress)
	feed(cfgW)
	t.Cleanup(func() { cfgW.Close() })
	return cmd, repR
}
