package testnet

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Postgres is a real PostgreSQL server (Debian's postgresql package) on a
// test host: a cluster made by initdb for the test, run as the postgres
// system user, trusting the role PostgresUser from anywhere.
type Postgres struct {
	Addr netip.AddrPort

	cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex
	from   []netip.AddrPort
	log    strings.Builder
}

// PostgresUser is the role the test cluster trusts.
const PostgresUser = "test"

var connReceived = regexp.MustCompile(`connection received: host=(\S+) port=(\d+)`)

// PostgresBin is the directory of the newest installed PostgreSQL server's
// programs (initdb, postgres, psql), or "" if none is installed.
func PostgresBin() string {
	if p := newest("/usr/lib/postgresql/*/bin/postgres"); p != "" {
		return filepath.Dir(p)
	}
	return ""
}

func pgMajor(path string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return n
}

func startPostgres(t testing.TB, ns *NS, addr netip.AddrPort) *Postgres {
	t.Helper()
	bin := PostgresBin()
	if bin == "" {
		t.Fatal("testnet: no PostgreSQL server is installed (/usr/lib/postgresql/*/bin/postgres): run scripts/test-setup.sh")
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("testnet: the postgres system user is missing (%v): run scripts/test-setup.sh", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cred := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Pdeathsig: syscall.SIGQUIT}

	dir, err := os.MkdirTemp("", "mcpsandbox-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", PostgresUser, "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	initdb.Dir, initdb.SysProcAttr = dir, cred
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("testnet: initdb: %v\n%s", err, out)
	}
	// Trust the test role from any address (the supervisor's, when proxied).
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte("host all all 0.0.0.0/0 trust\nlocal all all trust\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chown(filepath.Join(data, "pg_hba.conf"), uid, gid)

	p := &Postgres{Addr: addr, exited: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-c", "listen_addresses="+addr.Addr().String(), "-c", "port="+strconv.Itoa(int(addr.Port())),
		"-c", "unix_socket_directories="+dir, "-c", "log_connections=on", "-c", "logging_collector=off",
		"-c", "fsync=off", "-c", "shared_buffers=16MB", "-c", "max_connections=20")
	p.cmd.Dir, p.cmd.SysProcAttr = dir, cred
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Start(p.cmd); err != nil {
		t.Fatalf("testnet: starting postgres: %v", err)
	}
	ready := make(chan struct{})
	go p.read(stderr, ready)
	t.Cleanup(p.stop)
	select {
	case <-ready:
	case <-p.exited:
		t.Fatalf("testnet: postgres exited before it was ready: %v\n%s", p.cmd.ProcessState, p.Log())
	case <-time.After(60 * time.Second):
		t.Fatalf("testnet: postgres not ready after 60s:\n%s", p.Log())
	}
	return p
}

// read follows the server's log: it says when the server is ready and
// where each connection came from.
func (p *Postgres) read(stderr interface{ Read([]byte) (int, error) }, ready chan struct{}) {
	sc := bufio.NewScanner(stderr)
	isReady := false
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		p.log.WriteString(line + "\n")
		if m := connReceived.FindStringSubmatch(line); m != nil {
			if a, err := netip.ParseAddr(m[1]); err == nil {
				port, _ := strconv.Atoi(m[2])
				p.from = append(p.from, netip.AddrPortFrom(a, uint16(port)))
			}
		}
		p.mu.Unlock()
		if !isReady && strings.Contains(line, "ready to accept connections") {
			isReady = true
			close(ready)
		}
	}
	p.cmd.Wait()
	close(p.exited)
}

// Connections lists where the connections the server logged came from.
func (p *Postgres) Connections() []netip.AddrPort {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]netip.AddrPort(nil), p.from...)
}

// Log is the server's log so far.
func (p *Postgres) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// URL is a connection URL for host (a name or the address) as the test role.
func (p *Postgres) URL(host string) string {
	return fmt.Sprintf("postgresql://%s@%s:%d/postgres", PostgresUser, host, p.Addr.Port())
}

// stop asks for a fast shutdown, then kills.
func (p *Postgres) stop() {
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}
