package seccomp

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Expected results of the probes under the default profile without network.
var defaultProfileWant = joined(seccompModeWant, map[string]string{
	// runtimes need these
	"getpid": "ok", "open_read": "ok", "mmap_exec": "ok", "mprotect_exec": "ok",
	"fork_exec": "ok", "statx": "ok", "getrandom": "ok", "close_range": "ok",
	"faccessat2": "ok", "membarrier": "ok", "pidfd_open": "ok", "eventfd2": "ok",
	"epoll_create1": "ok", "memfd_create": "ok", "prlimit64": "ok", "mseal": "ok",
	"sigaltstack": "ok", "ioctl_tiocgwinsz": "ok", "ioctl_fionbio": "ok",
	"personality_query": "ok", "personality_linux": "ok", "socket_unix": "ok",
	"socket_unix_highbits": "ok", "socket_netlink_route": "ok", "socketpair": "ok",
	// reached the kernel, which refused the invalid arguments
	"rseq": "EINVAL", "execveat": "EBADF", "fchmodat2": "ENOENT", "mkdir": "ENOENT",
	// clone3 looks unimplemented, so libc and Go fall back to clone; kernel
	// AIO too (its events are a machine-wide budget)
	"clone3": "ENOSYS", "io_setup": "ENOSYS", "io_submit": "ENOSYS",
	// socketpair follows socket's family rule
	"socketpair_inet": "EPERM", "socketpair_netlink_audit": "EPERM", "socketpair_vsock": "EPERM",
	// refused by the filter
	"socket_inet": "EPERM", "socket_inet6": "EPERM", "socket_inet_highbits": "EPERM",
	"socket_inet_dgram": "EPERM", "socket_inet6_stream": "EPERM", "socket_inet_icmp": "EPERM", "socket_inet_udplite": "EPERM",
	"socket_netlink_audit": "EPERM", "socket_packet": "EPERM", "socket_vsock": "EPERM",
	"ptrace": "EPERM", "process_vm_readv": "EPERM", "process_vm_writev": "EPERM",
	"kcmp": "EPERM", "pidfd_getfd": "EPERM", "keyctl": "EPERM", "add_key": "EPERM",
	"request_key": "EPERM", "bpf": "EPERM", "perf_event_open": "EPERM",
	"userfaultfd": "EPERM", "io_uring_setup": "EPERM", "io_uring_enter": "EPERM",
	"io_uring_register": "EPERM", "mount": "EPERM", "umount2": "EPERM",
	"pivot_root": "EPERM", "chroot": "EPERM", "fsopen": "EPERM", "fsmount": "EPERM",
	"fsconfig": "EPERM", "fspick": "EPERM", "open_tree": "EPERM", "move_mount": "EPERM",
	"mount_setattr": "EPERM", "unshare_none": "EPERM", "unshare_user": "EPERM",
	"setns": "EPERM", "clone_newns": "EPERM", "clone_newuser": "EPERM",
	"clone_newpid": "EPERM", "clone_newnet": "EPERM", "clone_newipc": "EPERM",
	"clone_newuts": "EPERM", "clone_newcgroup": "EPERM", "ioctl_tiocsti": "EPERM",
	"ioctl_tiocsti_highbits": "EPERM", "ioctl_tioclinux": "EPERM",
	"personality_odd": "EPERM", "personality_linux32": "EPERM",
	"settimeofday": "EPERM", "clock_settime": "EPERM", "clock_adjtime": "EPERM",
	"adjtimex": "EPERM", "sethostname": "EPERM", "setdomainname": "EPERM",
	"kexec_load": "EPERM", "kexec_file_load": "EPERM", "init_module": "EPERM",
	"finit_module": "EPERM", "delete_module": "EPERM", "reboot": "EPERM",
	"swapon": "EPERM", "swapoff": "EPERM",
})

func compileOrFail(t testing.TB, profile string, families Families, logDenials bool) []byte {
	t.Helper()
	prog, err := Compile(profile, families, logDenials)
	if err != nil {
		t.Fatalf("Compile(%q, %s, %v): %v", profile, families, logDenials, err)
	}
	return prog
}

func checkResults(t *testing.T, got, want map[string]string) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if got[name] != want[name] {
			t.Errorf("%s: got %s, want %s", name, got[name], want[name])
		}
	}
}

// safeUnfiltered are the probes that may run without a refusing filter.
func safeUnfiltered() []string {
	var names []string
	for name := range seccompProbes {
		if !slices.Contains(probesNeverUnfiltered, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func TestSeccompDefaultProfileRefusesEscapes(t *testing.T) {
	prog := compileOrFail(t, "default", unixOnly, false)
	if len(seccompProbes) != len(defaultProfileWant) {
		t.Fatalf("%d probes but %d expectations", len(seccompProbes), len(defaultProfileWant))
	}
	got := probeCalls(t, prog, slices.Sorted(maps.Keys(seccompProbes)))
	checkResults(t, got, forThisKernel(t, defaultProfileWant))
}

// forThisKernel adjusts want for system calls this kernel lacks (an older
// kernel has no fchmodat2 or mseal): an allowed call then answers ENOSYS,
// as it does without any filter; a refused one still answers EPERM.
func forThisKernel(t *testing.T, want map[string]string) map[string]string {
	t.Helper()
	var names []string
	for name, w := range want {
		if w != "EPERM" && !slices.Contains(probesNeverUnfiltered, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	adjusted := maps.Clone(want)
	for name, res := range probeCalls(t, nil, names) {
		if res == "ENOSYS" {
			t.Logf("%s: this kernel lacks the call, so it answers ENOSYS whatever the filter allows", name)
			adjusted[name] = "ENOSYS"
		}
	}
	return adjusted
}

// Without a filter the same calls are not refused with EPERM (run as root),
// so each EPERM above is the filter's doing, not the kernel's.
func TestSeccompProbesWithoutFilterAreNotRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the control needs root: as another user the kernel itself answers EPERM")
	}
	got := probeCalls(t, nil, safeUnfiltered())
	for name, res := range got {
		if res == "EPERM" || strings.HasPrefix(res, "error") {
			t.Errorf("%s without a filter: %s; the probe does not isolate the filter's decision", name, res)
		}
	}
}

func TestSeccompInetFamiliesAllowInetSockets(t *testing.T) {
	prog := compileOrFail(t, "default", withInet, false)
	want := map[string]string{
		"socket_inet": "ok", "socket_inet6": "ok", "socket_inet_highbits": "ok",
		"socket_unix": "ok", "socket_netlink_route": "ok", "socketpair": "ok",
		"socketpair_inet": "ENOTSUP", "socketpair_netlink_audit": "EPERM",
		"socket_netlink_audit": "EPERM", "socket_packet": "EPERM", "socket_vsock": "EPERM",
		"ptrace": "EPERM", "clone_newnet": "EPERM",
	}
	checkResults(t, probeCalls(t, prog, slices.Sorted(maps.Keys(want))), want)
}

// InetQueries (mode none with the supervisor's resolver): UDP sockets of
// protocol 0 for DNS queries, and nothing else of IP: no TCP, no ping or
// UDP-Lite socket, no pair.
func TestSeccompInetQueriesAllowDatagramsOnly(t *testing.T) {
	prog := compileOrFail(t, "default", withQueries, false)
	want := map[string]string{
		"socket_inet_dgram": "ok", "socket_inet6": "ok",
		"socket_inet": "EPERM", "socket_inet6_stream": "EPERM", "socket_inet_highbits": "EPERM",
		"socket_inet_icmp": "EPERM", "socket_inet_udplite": "EPERM", "socketpair_inet": "EPERM",
		"socket_unix": "ok", "socket_netlink_route": "ok", "socket_packet": "EPERM",
	}
	checkResults(t, probeCalls(t, prog, slices.Sorted(maps.Keys(want))), want)
}

// --seccomp-log: every would-be refusal goes through (and is logged by the
// kernel); results equal those without a filter, except the ENOSYS answer.
func TestSeccompLogDenialsLetsCallsThrough(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("comparing with the unfiltered control needs root")
	}
	names := safeUnfiltered()
	control := probeCalls(t, nil, names)
	logged := probeCalls(t, compileOrFail(t, "default", unixOnly, true), names)
	want := maps.Clone(control)
	for _, name := range []string{"clone3", "mode_openat2", "io_setup", "io_submit"} {
		want[name] = "ENOSYS"
	}
	checkResults(t, logged, want)
	if logged["ptrace"] == "EPERM" || logged["socket_inet"] != "ok" || logged["mode_chmod_setuid"] != "ok" {
		t.Errorf("log mode still refuses: ptrace %s, socket_inet %s, chmod 4755 %s", logged["ptrace"], logged["socket_inet"], logged["mode_chmod_setuid"])
	}
}

func TestSeccompKillsX32Syscalls(t *testing.T) {
	for _, logDenials := range []bool{false, true} {
		out, st := runProbe(t, compileOrFail(t, "default", unixOnly, logDenials), "x32")
		if !killedBySIGSYS(st) {
			t.Errorf("logDenials=%v: x32 syscall: probe ended with %v, output %q; want killed by SIGSYS", logDenials, st, out)
		}
	}
}

// An i386 syscall (int 0x80) from a 64-bit process reaches seccomp with the
// i386 arch and must kill the process.
func TestSeccompKillsI386Syscalls(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is needed to build the int 0x80 program")
	}
	bin := filepath.Join(t.TempDir(), "int80")
	if out, err := exec.Command(gcc, "-O0", "-o", bin, "testdata/int80.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	argv, _ := json.Marshal([]string{bin})
	if _, st := runProbe(t, nil, "exec", probeArgvEnv+"="+string(argv)); !st.Success() {
		t.Skipf("without a filter int 0x80 ended with %v: this kernel has no IA32 emulation", st)
	}
	out, st := runProbe(t, compileOrFail(t, "default", unixOnly, false), "exec", probeArgvEnv+"="+string(argv))
	if !killedBySIGSYS(st) {
		t.Errorf("int 0x80 under the filter ended with %v, output %q; want killed by SIGSYS", st, out)
	}
}

// Real runtimes work under the default profile: the probe loads the filter
// and execs them.
func TestSeccompDefaultProfileRunsNode(t *testing.T) {
	runUnderDefault(t, "/usr/bin/node", "-e", nodeScript)
}

func TestSeccompDefaultProfileRunsPython(t *testing.T) {
	runUnderDefault(t, "/usr/bin/python3", "-c", pythonScript)
}

func runUnderDefault(t *testing.T, argv ...string) {
	if _, err := os.Stat(argv[0]); err != nil {
		t.Skipf("%s is not installed", argv[0])
	}
	tmp := t.TempDir()
	enc, _ := json.Marshal(argv)
	out, st := runProbe(t, compileOrFail(t, "default", unixOnly, false), "exec",
		probeArgvEnv+"="+string(enc), "TMPDIR="+tmp, "HOME="+tmp)
	if !st.Success() {
		t.Fatalf("%s under the default profile: %v\n%s", argv[0], st, out)
	}
	var res struct {
		OK   bool   `json:"ok"`
		Inet string `json:"inet"`
	}
	if err := json.Unmarshal(out, &res); err != nil || !res.OK {
		t.Fatalf("%s output %q (%v)", argv[0], out, err)
	}
	if res.Inet != "EPERM" {
		t.Errorf("%s: an IPv4 socket without network gave %q, want EPERM", argv[0], res.Inet)
	}
}

// nodeScript exercises what MCP servers do: files, JIT, crypto, zlib, a
// worker thread, a child process, a unix socket server, network interfaces
// (netlink) and libuv's io_uring probe; an IPv4 connection must fail.
const nodeScript = `
const fs = require('fs'), os = require('os'), path = require('path'), cp = require('child_process');
const net = require('net'), crypto = require('crypto'), zlib = require('zlib');
const { Worker } = require('worker_threads');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'n-'));
fs.writeFileSync(path.join(dir, 'f'), 'hi');
fs.promises.readFile(path.join(dir, 'f'), 'utf8').then(async (s) => {
  if (s !== 'hi') throw new Error('read back ' + s);
  crypto.randomBytes(16); crypto.createHash('sha256').update('x').digest();
  zlib.gunzipSync(zlib.gzipSync('x'.repeat(1000)));
  os.networkInterfaces();
  let sum = 0; for (let i = 0; i < 5e6; i++) sum += i % 7;
  cp.execFileSync('/bin/true');
  await new Promise((res, rej) => new Worker('require("worker_threads").parentPort.postMessage(1)', { eval: true }).once('message', res).once('error', rej));
  const sock = path.join(dir, 's');
  const srv = net.createServer((c) => c.end('pong'));
  await new Promise((res) => srv.listen(sock, res));
  const reply = await new Promise((res, rej) => net.connect(sock).once('data', (d) => res(String(d))).once('error', rej));
  srv.close();
  if (reply !== 'pong') throw new Error('unix socket reply ' + reply);
  const inet = await new Promise((res) => net.connect(9, '127.0.0.1').once('error', (e) => res(e.code)).once('connect', () => res('ok')));
  fs.rmSync(dir, { recursive: true });
  console.log(JSON.stringify({ ok: true, inet }));
}).catch((e) => { console.error(e); process.exit(1); });
`

// pythonScript: files, threads, a subprocess, asyncio, sockets and netlink.
const pythonScript = `
import asyncio, errno, json, os, socket, subprocess, tempfile, threading
d = tempfile.mkdtemp()
with open(os.path.join(d, "f"), "w") as f: f.write("hi")
assert open(os.path.join(d, "f")).read() == "hi"
os.urandom(16)
t = threading.Thread(target=lambda: None); t.start(); t.join()
subprocess.run(["/bin/true"], check=True)
a, b = socket.socketpair(); a.send(b"x"); assert b.recv(1) == b"x"
async def main(): await asyncio.sleep(0)
asyncio.run(main())
socket.if_nameindex()
try:
    socket.socket(socket.AF_INET).close(); inet = "ok"
except OSError as e:
    inet = errno.errorcode[e.errno]
print(json.dumps({"ok": True, "inet": inet}))
`

func TestSeccompDeniedNeverAllowed(t *testing.T) {
	allowed := append(slices.Clone(hotCalls), allowedCalls...)
	for _, name := range deniedCalls {
		if slices.Contains(allowed, name) {
			t.Errorf("%s is both denied and allowed", name)
		}
	}
	conditional := append([]string{"socket", "socketpair", "clone", "personality", "openat2"}, unimplementedCalls...)
	for _, r := range modeRules {
		conditional = append(conditional, r.name)
	}
	for _, name := range conditional {
		if slices.Contains(allowed, name) {
			t.Errorf("%s must only be allowed conditionally", name)
		}
	}
}

func TestSeccompLoadRejectsBadPrograms(t *testing.T) {
	for _, prog := range [][]byte{nil, make([]byte, 12)} {
		if err := loadProgram(prog); err == nil || !strings.Contains(err.Error(), "instructions of 8 bytes") {
			t.Errorf("loadProgram(%d bytes) = %v, want a size error", len(prog), err)
		}
	}
}

func TestSeccompInfo(t *testing.T) {
	ok, version, err := Info()
	if !ok || err != nil {
		t.Fatalf("Info: %v %v", ok, err)
	}
	if !strings.HasPrefix(version, "2.") {
		t.Errorf("libseccomp version %q", version)
	}
}
