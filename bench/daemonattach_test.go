package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// memoryPackage is the npm reference server the attach benchmark starts
// through npx, pinned as testdata/npm pins it.
const memoryPackage = "@modelcontextprotocol/server-memory@2026.8.31"

// attachLimit bounds each wait for an instance to end or a pool to refill
// (a cold npx start takes seconds; more on a busy machine).
const attachLimit = 2 * time.Minute

// attachServer is a server of BenchmarkDaemonAttach's daemon.
type attachServer struct {
	name  string
	warm  bool
	alone bool // max-instances 1: no refill starts beside the attaching session
}

// BenchmarkDaemonAttach: attach → first response, the time from dialing
// the daemon until the answer to initialize arrives, for a server with a
// warm instance (prestart 1) and one without (prestart 0, the instance
// started for the client), of two kinds: the static example server, and
// the npm reference server-memory through `npx -y` (its package cache
// prepared first with `mcpsandbox prepare`, so that it starts offline,
// confined, as a daemon's npx servers do). Each is reached two ways: the
// daemon's client API in this process (daemon.Dial, the hello, then
// initialize), and the `mcpsandbox connect NAME` binary, which a host
// starts for every session; the binary's own start (`mcpsandbox version`)
// is reported beside them as its floor. Two baselines time a server's own
// first initialize: its process answers a ping, as a warm instance has,
// then the time from initialize sent to its answer is taken (Node's first
// initialize takes milliseconds of CPU). "direct": the process started
// unconfined, no daemon (the static server; node on the same package,
// installed in testdata/npm). "run": the same launch line as the daemon's
// entry under `mcpsandbox run` (confined alike, at the servers' lower CPU
// weight, behind one relay), so warm − run is what the daemon's socket
// adds. After each sample the benchmark waits for the instance to end and,
// for a warm server, the pool to be refilled (the daemon logs both), so
// every sample starts alike. Goal: warm ≤ 10 ms for any server, npx
// included; reported are the medians and warm ÷ cold.
func BenchmarkDaemonAttach(b *testing.B) {
	prepareNpx(b)
	npx := []string{"npx", "-y", memoryPackage}
	run := []string{bins.mcpsandbox, "run", "--log-level", "warn", "--"}
	baselines := map[string][]string{
		"static-direct": {bins.staticserver},
		"npx-direct":    {"node", testenv.NPMServer(b, "server-memory")},
		"static-run":    append(slices.Clone(run), bins.staticserver),
		"npx-run":       append(slices.Clone(run), npx...),
	}
	servers := []attachServer{{"static-warm", true, false}, {"static-cold", false, false}, {"npx-warm", true, false}, {"npx-cold", false, false},
		{"static-warm-alone", true, true}, {"npx-warm-alone", true, true}}
	entries := map[string]string{
		"static-warm":       entryJSON([]string{bins.staticserver}, `"prestart": 1`),
		"static-cold":       entryJSON([]string{bins.staticserver}, `"prestart": 0`),
		"npx-warm":          entryJSON(npx, `"prestart": 1`),
		"npx-cold":          entryJSON(npx, `"prestart": 0`),
		"static-warm-alone": entryJSON([]string{bins.staticserver}, `"prestart": 1, "max-instances": 1`),
		"npx-warm-alone":    entryJSON(npx, `"prestart": 1, "max-instances": 1`),
	}
	var cfg []string
	for _, s := range servers {
		cfg = append(cfg, fmt.Sprintf("%q: %s", s.name, entries[s.name]))
	}
	d := startDaemonProc(b, "{\"mcpServers\": {\n"+strings.Join(cfg, ",\n")+"\n}}\n")
	d.waitWarm(b, map[string]int{"static-warm": 1, "npx-warm": 1, "static-warm-alone": 1, "npx-warm-alone": 1}, attachLimit)

	used := map[string]int{} // sessions each server has served
	got := samples{}
	version := []string{bins.mcpsandbox, "version"}
	for b.Loop() {
		for _, s := range servers {
			ways := []string{"api", "connect"}
			if s.alone {
				ways = ways[:1]
			}
			for _, way := range ways {
				var took time.Duration
				if way == "api" {
					took = attachAPI(b, d, s)
				} else {
					took = spawnToInitialize(b, []string{bins.mcpsandbox, "connect", s.name, "--socket-dir", filepath.Dir(d.socket)})
				}
				got[s.name+"-"+way] = append(got[s.name+"-"+way], took)
				used[s.name]++
				// Outside the measurement: the session's instance ends and
				// the pool is whole again.
				d.log.waitCount(b, msgEnded, s.name, used[s.name], "", attachLimit)
				if s.warm {
					d.log.waitCount(b, msgWarm, s.name, used[s.name]+1, msgPrestartFails, attachLimit)
				}
			}
		}
		got["connect-floor"] = append(got["connect-floor"], spawnToLine(b, version, "", "mcpsandbox"))
		for name, argv := range baselines {
			got[name] = append(got[name], firstInitialize(b, argv))
		}
	}
	for name := range got {
		b.ReportMetric(float64(got.median(name))/1e6, name+"-ms")
	}
	for _, kind := range []string{"static", "npx"} {
		for _, way := range []string{"api", "connect"} {
			warm, cold := got.median(kind+"-warm-"+way), got.median(kind+"-cold-"+way)
			b.ReportMetric(float64(warm)/float64(cold), fmt.Sprintf("x-%s-warm-vs-cold-%s", kind, way))
		}
		warm := got.median(kind + "-warm-api")
		b.ReportMetric(float64(warm)/float64(got.median(kind+"-warm-alone-api")), "x-"+kind+"-warm-api-vs-alone")
		for _, base := range []string{"direct", "run"} {
			m := got.median(kind + "-" + base)
			b.ReportMetric(float64(warm)/float64(m), "x-"+kind+"-warm-api-vs-"+base)
			b.ReportMetric(float64(warm-m)/1e6, kind+"-warm-api-added-vs-"+base+"-ms")
		}
	}
}

// attachAPI dials the daemon for a session of s, sends initialize and
// returns the time until its answer. For a warm server it checks that the
// session got the instance that was warm.
func attachAPI(b *testing.B, d *daemonProc, s attachServer) time.Duration {
	start := time.Now()
	c, a, err := daemon.Dial(d.socket, daemon.Hello{Connect: s.name})
	if err != nil {
		b.Fatal(err)
	}
	if a.Error != nil {
		b.Fatalf("connect %s refused: %s", s.name, a.Error.Reason)
	}
	if _, err := io.WriteString(c, initializeLine); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	took := time.Since(start)
	if err != nil || !strings.Contains(line, `"protocolVersion"`) {
		b.Fatalf("%s: no answer to initialize (%v): %q; log:\n%s", s.name, err, line, d.log.tail(20))
	}
	// The host leaves: the daemon ends the session and closes.
	c.CloseWrite()
	io.Copy(io.Discard, c)
	c.Close()
	if s.warm && !d.log.has(msgWarm, "instance="+a.Instance) {
		b.Fatalf("%s: the session got %s, which was never warm", s.name, a.Instance)
	}
	return took
}

// firstInitialize starts argv, waits for its answer to a ping, then
// returns the time from initialize sent to its answer.
func firstInitialize(b *testing.B, argv []string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	// run's npx finds the prepared cache there.
	cmd.Env = append(os.Environ(), "MCPSANDBOX_STATE_DIR="+benchStateDir())
	var stderr strings.Builder // shown on failure only: node's server announces itself there
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	lines := bufio.NewReader(out)
	roundTrip := func(msg, want string) time.Duration {
		start := time.Now()
		io.WriteString(in, msg)
		line, err := lines.ReadString('\n')
		took := time.Since(start)
		if err != nil || !strings.Contains(line, want) {
			in.Close()
			cmd.Wait()
			b.Fatalf("%v: no answer with %s (%v): %q; stderr:\n%s", argv, want, err, line, &stderr)
		}
		return took
	}
	roundTrip(`{"jsonrpc":"2.0","id":0,"method":"ping"}`+"\n", `"result"`)
	took := roundTrip(initializeLine, `"protocolVersion"`)
	in.Close()
	cmd.Wait()
	return took
}

// prepareNpx fetches the memory server's package into its state directory
// under benchStateDir, as `mcpsandbox prepare` does for users, so the
// daemon's npx instances start offline.
func prepareNpx(b *testing.B) {
	b.Helper()
	if _, err := exec.LookPath("npx"); err != nil {
		b.Fatal("npx is needed for the npx server's figures: apt-get install -y npm")
	}
	cmd := exec.Command(bins.mcpsandbox, "prepare", "--log-level", "warn", "--", "npx", "-y", memoryPackage)
	cmd.Dir = bins.dir
	cmd.Env = append(os.Environ(), "MCPSANDBOX_STATE_DIR="+benchStateDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("mcpsandbox prepare (it needs the npm registry): %v\n%s", err, out)
	}
}
