package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Options configure one run of the demo.
type Options struct {
	// ServerCommand starts the example server on stdio, e.g.
	// {"/usr/local/bin/mcpsandbox-demo", "example-server"}.
	ServerCommand []string
	// Unconfined runs the example server without confinement.
	Unconfined bool
	// Supervise runs the supervisor with policy p between the host's pipes
	// until the host leaves (supervisor.Run, in mcpsandbox), naming
	// settings in its messages by setting (supervisor.Options.Setting). It
	// and ConfinementProblem are passed in because this package is also
	// linked, without cgo, into the static benchmark server, and the
	// sandbox behind the supervisor needs cgo (libseccomp).
	Supervise func(ctx context.Context, p policy.Policy, setting field.Namer, hostIn io.Reader, hostOut io.Writer) (Ended, error)
	// ConfinementProblem says why servers cannot run confined on this
	// machine, settings named by setting, or nil when they can (from
	// `mcpsandbox doctor`'s checks).
	ConfinementProblem func(setting field.Namer) error
	// Out receives the readable report as the demo goes; nil discards it.
	Out io.Writer
	// Choose returns the policy `mcpsandbox run` would apply to the
	// command, as run chooses it (the built-in the command selects).
	Choose func(cmd []string) (Chosen, error)
}

// Chosen is a policy and why run would apply it.
type Chosen struct {
	Policy policy.Policy
	Name   string // the built-in or file
	Why    string
}

// Heartbeat settings of the demo: short, so a hang is found in about a
// second instead of the default 15s × 3.
const (
	demoPingInterval = 250 * time.Millisecond
	demoPingTimeout  = 500 * time.Millisecond
	demoPingFailures = 2
)

// stepTimeout bounds every step, so a broken supervisor fails the demo
// instead of hanging it.
const stepTimeout = 30 * time.Second

// Ended is how supervision ended (supervisor.Outcome).
type Ended struct {
	Reason   string
	ExitCode int
}

// Report is what the demo saw, as the host sees it.
type Report struct {
	Confined         bool
	ConfinementError string // why the demo fell back to unconfined, if it did
	Protocol         string // negotiated protocol version
	ServerName       string
	Tools            []string
	Echo             string       // the echo tool's answer
	Policy           string       // the policy run chose for the example server
	PolicyWhy        string       // and why
	Denied           Denial       // the call the demo's tool rule refused
	AuditLine        string       // the audit line of that call
	Inside           *ProbeReport // nil when the server has no probe tool
	HostNamespaces   map[string]string
	SecretFile       string // the host file the probe tried to read
	Crash            Recovery
	Hang             Recovery
	PingSettings     string
	Calls, Failed    int    // tool calls made, and how many got an error
	Instances        int    // distinct server processes that answered
	Shutdown         string // how supervision ended after the client left
	ShutdownExitCode int
}

// Recovery is one failure the session went through.
type Recovery struct {
	ErrCode     int64         // JSON-RPC error code the in-flight call got
	ErrMessage  string        // and its message
	FailedAfter time.Duration // from sending the call to its error
	RecoveredIn time.Duration // from the error to the next call's answer
	OldInstance string        // instance id before
	NewInstance string        // instance id after (differs: a new process)
	GotError    bool
	NextCallOK  bool
	SameSession bool // the client kept its session throughout
}

// Run drives a host session through the supervisor to the example server
// and reports what happened. A step that does not behave as the supervisor
// promises ends the demo with an error; the report holds what was seen.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if len(opts.ServerCommand) == 0 || opts.Supervise == nil || opts.ConfinementProblem == nil || opts.Choose == nil {
		return nil, errors.New("demo: Options need ServerCommand, Supervise, ConfinementProblem and Choose")
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	d := &driver{out: out, rep: &Report{Confined: !opts.Unconfined, HostNamespaces: ownNamespaces()}, instances: map[string]bool{}}
	chosen, err := opts.Choose(opts.ServerCommand)
	if err != nil {
		return d.rep, fmt.Errorf("choosing the policy: %w", err)
	}
	d.rep.Policy, d.rep.PolicyWhy = chosen.Name, chosen.Why
	p := chosen.Policy
	p.Command = opts.ServerCommand
	p.Unconfined = opts.Unconfined
	audit, err := d.withRules(&p)
	if err != nil {
		return d.rep, err
	}
	defer os.RemoveAll(filepath.Dir(audit))
	p.PingInterval, p.PingTimeout, p.PingFailures = demoPingInterval, demoPingTimeout, demoPingFailures
	d.rep.PingSettings = fmt.Sprintf("every %s, timeout %s, %d misses", p.PingInterval, p.PingTimeout, p.PingFailures)
	if !p.Unconfined {
		if err := opts.ConfinementProblem(Setting); err != nil {
			d.rep.Confined, d.rep.ConfinementError = false, err.Error()
			p.Unconfined = true
		}
	}
	if err := p.Validate(); err != nil {
		return d.rep, errors.New(field.Message(err, Setting))
	}
	d.header()

	sup, err := d.connect(ctx, p, opts.Supervise)
	if err != nil {
		return d.rep, err
	}
	defer sup.stop()
	for _, step := range []func(context.Context) error{d.listTools, d.echo, d.denied, d.auditLine, d.probe, d.crash, d.hang} {
		if err := step(ctx); err != nil {
			return d.rep, err
		}
	}
	sup.finish(d.rep)
	d.summary()
	return d.rep, nil
}

type driver struct {
	step      int // the number of the step being printed
	audit     string
	out       io.Writer
	rep       *Report
	cs        *mcp.ClientSession
	instances map[string]bool
}

func (d *driver) printf(format string, args ...any) { fmt.Fprintf(d.out, format, args...) }

// supervised is the supervisor running in this process, between pipes.
type supervised struct {
	cs     *mcp.ClientSession
	cancel context.CancelFunc
	done   chan struct{} // closed when Supervise has returned
	out    Ended
	err    error
}

func (d *driver) connect(ctx context.Context, p policy.Policy, supervise func(context.Context, policy.Policy, field.Namer, io.Reader, io.Writer) (Ended, error)) (*supervised, error) {
	hostOutR, hostOutW := io.Pipe() // supervisor → client
	hostInR, hostInW := io.Pipe()   // client → supervisor
	supCtx, cancel := context.WithCancel(ctx)
	s := &supervised{cancel: cancel, done: make(chan struct{})}
	go func() {
		s.out, s.err = supervise(supCtx, p, Setting, hostInR, hostOutW)
		// Whatever the client is doing now sees the end instead of blocking.
		hostOutW.Close()
		hostInR.Close()
		close(s.done)
	}()

	client := mcp.NewClient(&mcp.Implementation{Name: "mcpsandbox-demo", Version: "1"}, nil)
	cctx, ccancel := context.WithTimeout(ctx, stepTimeout)
	defer ccancel()
	cs, err := client.Connect(cctx, &mcp.IOTransport{Reader: hostOutR, Writer: hostInW}, nil)
	if err != nil {
		s.stop()
		why := s.out.Reason
		if s.err != nil {
			why = s.err.Error()
		}
		return nil, fmt.Errorf("starting the example server under the supervisor: %w (supervisor: %s)", err, why)
	}
	s.cs, d.cs = cs, cs
	init := cs.InitializeResult()
	d.rep.Protocol = init.ProtocolVersion
	if init.ServerInfo != nil {
		d.rep.ServerName = init.ServerInfo.Name
	}
	d.printf("Session: %s, protocol %s.\n\n", d.rep.ServerName, d.rep.Protocol)
	return s, nil
}

// finish closes the session as a host would and waits for the supervisor
// to shut the server down.
func (s *supervised) finish(rep *Report) {
	s.cs.Close()
	select {
	case <-s.done:
		rep.Shutdown, rep.ShutdownExitCode = s.out.Reason, s.out.ExitCode
		if s.err != nil {
			rep.Shutdown = s.err.Error()
		}
	case <-time.After(stepTimeout):
		rep.Shutdown = fmt.Sprintf("supervisor still running %s after the host left", stepTimeout)
		rep.ShutdownExitCode = -1
	}
}

// stop ends the supervisor (at once if the demo stops early) and waits for it.
func (s *supervised) stop() {
	s.cancel()
	if s.cs != nil {
		s.cs.Close()
	}
	select {
	case <-s.done:
	case <-time.After(stepTimeout):
	}
}

func (d *driver) header() {
	d.printf("mcpsandbox-demo: a host session through `mcpsandbox run` to the bundled example server.\n")
	switch {
	case d.rep.Confined:
		d.printf("The server runs confined (the default).\n")
		d.printf("Policy: %s, as `mcpsandbox run` chooses it: %s.\n", d.rep.Policy, d.rep.PolicyWhy)
		d.printf("The demo adds a tool rule, %s %s, and an audit log (%s).\n", Setting("DenyTools"), WipeTool, Setting("AuditLog"))
	case d.rep.ConfinementError != "":
		d.printf("\n!!! CONFINEMENT IS NOT AVAILABLE HERE: %s\n", d.rep.ConfinementError)
		d.printf("!!! The demo runs the example server UNCONFINED, with your full rights.\n")
		d.printf("!!! `mcpsandbox run` would refuse to start a server; `mcpsandbox doctor` says what to fix.\n")
	default:
		d.printf("!!! The server runs UNCONFINED (%s), with your full rights.\n", Setting("Unconfined"))
	}
	d.printf("Heartbeat: ping %s.\n\n", d.rep.PingSettings)
}

func (d *driver) listTools(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	res, err := d.cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	for _, t := range res.Tools {
		d.rep.Tools = append(d.rep.Tools, t.Name)
	}
	slices.Sort(d.rep.Tools)
	d.printf("%d. Tools listed: %s (%s is hidden by the policy)\n\n", d.next(), strings.Join(d.rep.Tools, ", "), WipeTool)
	if slices.Contains(d.rep.Tools, WipeTool) {
		return fmt.Errorf("tools/list shows %s, which the policy denies", WipeTool)
	}
	return nil
}

func (d *driver) echo(ctx context.Context) error {
	text, err := d.call(ctx, "echo", map[string]any{"text": "hello through the sandbox"})
	if err != nil {
		return fmt.Errorf("echo: %w", err)
	}
	d.rep.Echo = text
	d.printf("%d. echo {text: \"hello through the sandbox\"} → %q\n\n", d.next(), text)
	return nil
}

// call makes one tool call and returns its text, counting it.
func (d *driver) call(ctx context.Context, name string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	d.rep.Calls++
	res, err := d.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		d.rep.Failed++
		return "", err
	}
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	text := strings.Join(texts, "")
	if res.IsError {
		d.rep.Failed++
		return "", fmt.Errorf("tool error: %s", text)
	}
	return text, nil
}

func (d *driver) probe(ctx context.Context) error {
	if !slices.Contains(d.rep.Tools, ProbeTool) {
		d.printf("%d. Inside the server: the example server has no %s tool in this build.\n\n", d.next(), ProbeTool)
		return nil
	}
	secret, cleanup := plantSecret()
	defer cleanup()
	d.rep.SecretFile = secret
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("probe: listening on host loopback: %w", err)
	}
	defer ln.Close()
	go acceptAll(ln)

	text, err := d.call(ctx, ProbeTool, map[string]any{"read_file": secret, "dial_tcp": ln.Addr().String()})
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	var in ProbeReport
	if err := json.Unmarshal([]byte(text), &in); err != nil {
		return fmt.Errorf("probe: bad report %q: %w", text, err)
	}
	d.rep.Inside = &in
	d.printInside()
	return nil
}

func (d *driver) printInside() {
	in := d.rep.Inside
	d.printf("%d. Inside the server, as it sees itself:\n", d.next())
	d.printf("   uid %d, gid %d, pid %d, hostname %q, %d processes visible\n", in.UID, in.GID, in.PID, in.Hostname, in.Processes)
	own, shared := d.namespaceSplit()
	sharedNote := listOrNone(shared)
	if slices.Contains(shared, "user") && d.rep.Confined && os.Geteuid() == 0 && in.UID != 0 {
		sharedNote += " (mcpsandbox runs as root, so the server gets a uid of its own instead)"
	}
	d.printf("   namespaces of its own: %s; shared with the host: %s\n", listOrNone(own), sharedNote)
	d.printf("   seccomp: %s, no_new_privs: %s, effective capabilities: %s\n", seccompMode(in.Seccomp), in.NoNewPrivs, in.CapEff)
	d.printf("   cgroup: %s\n", strings.ReplaceAll(in.Cgroup, "\n", "; "))
	d.printf("   cgroup limits, read from its cgroup in %s: %s\n", cgroupRoot, in.Limits)
	d.printf("   open files limit: %d\n", in.NoFile)
	where := "a file in your home"
	if home, err := os.UserHomeDir(); err != nil || filepath.Dir(in.Read.Target) != home {
		where = "a file of yours outside the sandbox"
	}
	d.printf("   read %s (%s): %s\n", in.Read.Target, where, verdict(in.Read))
	d.printf("   connect to %s (a port open on the host's loopback): %s\n\n", in.Dial.Target, verdict(in.Dial))
}

// namespaceSplit sorts the server's namespaces into its own and the host's.
func (d *driver) namespaceSplit() (own, shared []string) {
	for _, ns := range []string{"mnt", "pid", "net", "ipc", "uts", "cgroup", "user"} {
		inside, ok := d.rep.Inside.Namespaces[ns]
		if !ok {
			continue
		}
		if inside == d.rep.HostNamespaces[ns] {
			shared = append(shared, ns)
		} else {
			own = append(own, ns)
		}
	}
	return own, shared
}

// OwnNamespaces lists the namespaces the server does not share with the
// demo (the host side), in a fixed order.
func (r *Report) OwnNamespaces() []string {
	if r.Inside == nil {
		return nil
	}
	own, _ := (&driver{rep: r}).namespaceSplit()
	return own
}

func verdict(a Attempt) string {
	if a.Allowed {
		return "ALLOWED"
	}
	return "blocked (" + a.Error + ")"
}

func seccompMode(s string) string {
	switch s {
	case "0":
		return "off"
	case "1":
		return "strict"
	case "2":
		return "filter"
	}
	return "unknown (" + s + ")"
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, " ")
}

// plantSecret creates a readable file in the user's home for the probe to
// try, and a function removing it. Outside the home (when it is not
// writable) it uses the temp dir, which confinement hides as well.
func plantSecret() (string, func()) {
	dirs := []string{os.TempDir()}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append([]string{home}, dirs...)
	}
	for _, dir := range dirs {
		f, err := os.CreateTemp(dir, ".mcpsandbox-demo-secret-*")
		if err != nil {
			continue
		}
		f.WriteString("a secret the server must not read\n")
		f.Close()
		return f.Name(), func() { os.Remove(f.Name()) }
	}
	return "/etc/shadow", func() {}
}

func acceptAll(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

func ownNamespaces() map[string]string {
	m := map[string]string{}
	for _, ns := range []string{"mnt", "pid", "net", "ipc", "uts", "cgroup", "user"} {
		if link, err := os.Readlink("/proc/self/ns/" + ns); err == nil {
			m[ns] = link
		}
	}
	return m
}

// crash asks the server to exit in the middle of a call: the host gets one
// error for that call, and the next call is answered by a new process.
func (d *driver) crash(ctx context.Context) error {
	d.printf("%d. crash {code: 3}: the server exits in the middle of the call.\n", d.next())
	return d.survive(ctx, &d.rep.Crash, "crash", map[string]any{"code": 3})
}

// hang asks the server to stop answering anything: only the heartbeat can
// tell, and the supervisor kills and restarts it.
func (d *driver) hang(ctx context.Context) error {
	d.printf("%d. hang: the server stops reading and writing, pings included.\n", d.next())
	return d.survive(ctx, &d.rep.Hang, "hang", nil)
}

func (d *driver) survive(ctx context.Context, r *Recovery, tool string, args map[string]any) error {
	session := d.cs.ID()
	before, err := d.instance(ctx)
	if err != nil {
		return fmt.Errorf("instance before %s: %w", tool, err)
	}
	r.OldInstance = before

	start := time.Now()
	_, err = d.call(ctx, tool, args)
	r.FailedAfter = time.Since(start)
	var wire *jsonrpc.Error
	if err == nil || !errors.As(err, &wire) {
		d.printf("   UNEXPECTED: the call returned %v instead of one JSON-RPC error\n\n", err)
		return fmt.Errorf("%s: the host should get one JSON-RPC error, got %v", tool, err)
	}
	r.GotError, r.ErrCode, r.ErrMessage = true, wire.Code, wire.Message
	d.printf("   The host got one error after %s: code %d, %q\n", round(r.FailedAfter), r.ErrCode, r.ErrMessage)

	failed := time.Now()
	after, err := d.instance(ctx)
	if err != nil {
		d.printf("   UNEXPECTED: the next call failed: %v\n\n", err)
		return fmt.Errorf("call after %s: %w", tool, err)
	}
	r.RecoveredIn = time.Since(failed)
	r.NewInstance, r.NextCallOK = after, true
	r.SameSession = d.cs.ID() == session
	d.printf("   The next call succeeded %s later, answered by a new server process (instance %s → %s), same session.\n\n",
		round(r.RecoveredIn), r.OldInstance, r.NewInstance)
	if r.NewInstance == r.OldInstance {
		return fmt.Errorf("%s: the server process was not replaced", tool)
	}
	return nil
}

// instance asks which server process answers, and counts distinct ones.
func (d *driver) instance(ctx context.Context) (string, error) {
	id, err := d.call(ctx, "instance", nil)
	if err == nil && !d.instances[id] {
		d.instances[id] = true
		d.rep.Instances++
	}
	return id, err
}

func round(d time.Duration) time.Duration {
	if d > time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Microsecond)
}

func (d *driver) summary() {
	r := d.rep
	d.printf("Summary: %d tool calls in one host session, %d answered with an error (the denied call, the crash and the hang), the rest succeeded.\n", r.Calls, r.Failed)
	d.printf("%d server processes served the session. Crash: next answer %s after the call. Hang: found by the heartbeat after %s, next answer %s later.\n",
		r.Instances, round(r.Crash.FailedAfter+r.Crash.RecoveredIn), round(r.Hang.FailedAfter), round(r.Hang.RecoveredIn))
	switch in := r.Inside; {
	case !r.Confined:
		d.printf("The server ran UNCONFINED.\n")
	case in != nil:
		d.printf("The server ran confined: reading your file %s, reaching the host's loopback %s.\n", shortVerdict(in.Read), shortVerdict(in.Dial))
	default:
		d.printf("The server ran confined.\n")
	}
	d.printf("After the host left, supervision ended: %s (exit status %d).\n", r.Shutdown, r.ShutdownExitCode)
}

func shortVerdict(a Attempt) string {
	if a.Allowed {
		return "ALLOWED"
	}
	return "blocked"
}
