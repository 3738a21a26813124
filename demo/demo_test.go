package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// serveArg as the first argument makes the test binary the example server,
// so the demo can start it (confined or not) like mcpsandbox-demo's
// `example-server` subcommand.
const serveArg = "-test.serve-example"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == serveArg {
		if err := ServeExample(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func exampleCommand(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, serveArg}
}

// realOptions wires the demo to the real supervisor and confinement check,
// as `mcpsandbox-demo` does.
func realOptions(t *testing.T, unconfined bool, out io.Writer) Options {
	return Options{
		ServerCommand: exampleCommand(t),
		Unconfined:    unconfined,
		Out:           out,
		Supervise: func(ctx context.Context, p policy.Policy, setting field.Namer, hostIn io.Reader, hostOut io.Writer) (Ended, error) {
			o, err := supervisor.Run(ctx, supervisor.Options{Policy: p, HostIn: hostIn, HostOut: hostOut, Log: slog.New(slog.DiscardHandler), Setting: setting})
			code := 0 // as mcpsandbox run exits
			if o.Failed {
				code = 1
			}
			return Ended{Reason: o.Reason, ExitCode: code}, err
		},
		Choose:             ChooseAsRun,
		ConfinementProblem: func(setting field.Namer) error { return sandbox.Doctor().Problem(setting) },
	}
}

func runDemo(t *testing.T, opts Options) (*Report, string) {
	t.Helper()
	var out bytes.Buffer
	opts.Out = &out
	rep, err := Run(t.Context(), opts)
	if err != nil {
		t.Fatalf("demo failed: %v\nreport so far:\n%s", err, out.String())
	}
	return rep, out.String()
}

// checkSession asserts what every demo run must show, confined or not.
func checkSession(t *testing.T, rep *Report, out string) {
	t.Helper()
	for _, tool := range []string{"echo", "crash", "hang", "instance", ProbeTool} {
		if !slices.Contains(rep.Tools, tool) {
			t.Errorf("tools listed %v lack %s", rep.Tools, tool)
		}
	}
	if rep.ServerName != ExampleServerName || rep.Protocol == "" {
		t.Errorf("session with %q at protocol %q", rep.ServerName, rep.Protocol)
	}
	if rep.Echo != "hello through the sandbox" {
		t.Errorf("echo answered %q", rep.Echo)
	}
	// The policy run chooses, a denied tool, and its audit line.
	if rep.Policy != "default" || !strings.Contains(rep.PolicyWhy, "no built-in policy is for the program") {
		t.Errorf("policy %q (%s), want default, as run chooses for the example server", rep.Policy, rep.PolicyWhy)
	}
	if slices.Contains(rep.Tools, WipeTool) {
		t.Errorf("tools listed %v show the denied %s", rep.Tools, WipeTool)
	}
	if rep.Denied.Code != supervisor.CodePolicyDenied {
		t.Errorf("the denied call got %+v, want code %d", rep.Denied, supervisor.CodePolicyDenied)
	}
	// Settings are named as the user sets them, run's flags, never as Go.
	if !strings.Contains(rep.Denied.Message, "it matches --deny-tool") {
		t.Errorf("the denial %q does not name --deny-tool", rep.Denied.Message)
	}
	if raw := testenv.Unrendered(out, testenv.GoNames(reflect.TypeFor[policy.Policy]())); len(raw) > 0 {
		t.Errorf("the demo's output names settings as Go does, %q:\n%s", raw, out)
	}
	for _, want := range []string{`"tool":"wipe"`, `"outcome":"denied"`, `"api_key":"***"`, `"code":-31107`} {
		if !strings.Contains(rep.AuditLine, want) {
			t.Errorf("audit line %s lacks %s", rep.AuditLine, want)
		}
	}
	if strings.Contains(rep.AuditLine, demoSecret) || !strings.Contains(out, rep.AuditLine) {
		t.Errorf("audit line %q holds the secret, or the demo did not print it", rep.AuditLine)
	}
	for name, r := range map[string]Recovery{"crash": rep.Crash, "hang": rep.Hang} {
		if !r.GotError || r.ErrCode != supervisor.CodeServerCrashed {
			t.Errorf("%s: in-flight call got error=%v code %d, want %d", name, r.GotError, r.ErrCode, supervisor.CodeServerCrashed)
		}
		if !r.NextCallOK || !r.SameSession {
			t.Errorf("%s: next call ok=%v, same session=%v", name, r.NextCallOK, r.SameSession)
		}
		if r.OldInstance == "" || r.NewInstance == r.OldInstance {
			t.Errorf("%s: instance %q → %q, want a new server process", name, r.OldInstance, r.NewInstance)
		}
		if !strings.Contains(out, fmt.Sprint(r.ErrCode)) {
			t.Errorf("%s: the report does not show the error code %d", name, r.ErrCode)
		}
	}
	// The hang can only be found by missed pings: not before the first
	// timeout has run out.
	if rep.Hang.FailedAfter < demoPingTimeout {
		t.Errorf("hang reported after %s, sooner than one ping timeout (%s)", rep.Hang.FailedAfter, demoPingTimeout)
	}
	if rep.Instances != 3 {
		t.Errorf("%d server processes answered, want 3 (start, after crash, after hang)", rep.Instances)
	}
	if rep.Calls == 0 || rep.Failed != 3 {
		t.Errorf("%d calls, %d failed; want exactly the denied call, the crash and the hang to fail", rep.Calls, rep.Failed)
	}
	if rep.ShutdownExitCode != 0 {
		t.Errorf("after the host left, supervision ended with %d: %s", rep.ShutdownExitCode, rep.Shutdown)
	}
}

// Unconfined, the probe shows what the demo exists to prevent: the server
// reads a file in the user's home and reaches the host's loopback.
func TestDemoUnconfined(t *testing.T) {
	rep, out := runDemo(t, realOptions(t, true, nil))
	checkSession(t, rep, out)
	if rep.Confined {
		t.Error("report says confined for --unconfined")
	}
	if !strings.Contains(out, "UNCONFINED") {
		t.Error("the report does not say loudly that the server is unconfined")
	}
	in := rep.Inside
	if in == nil {
		t.Fatal("no probe report")
	}
	if !in.Read.Allowed || !in.Dial.Allowed {
		t.Errorf("unconfined server could not read %s (%s) or dial %s (%s)", in.Read.Target, in.Read.Error, in.Dial.Target, in.Dial.Error)
	}
	if in.UID != os.Getuid() || len(rep.OwnNamespaces()) != 0 {
		t.Errorf("unconfined server has uid %d (want %d) and own namespaces %v (want none)", in.UID, os.Getuid(), rep.OwnNamespaces())
	}
	if _, err := os.Stat(rep.SecretFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the demo left its planted file %s behind", rep.SecretFile)
	}
}

// Confined (the default), the server reports from inside: not root, its
// own namespaces, seccomp filtering, and both attempts blocked.
func TestDemoConfined(t *testing.T) {
	requireConfinement(t)
	rep, out := runDemo(t, realOptions(t, false, nil))
	if !rep.Confined {
		t.Fatalf("the demo could not confine the example server here: %s", rep.ConfinementError)
	}
	checkSession(t, rep, out)
	in := rep.Inside
	if in == nil {
		t.Fatal("no probe report")
	}
	if in.UID == 0 || in.GID == 0 {
		t.Errorf("confined server runs as uid %d gid %d", in.UID, in.GID)
	}
	for _, ns := range []string{"mnt", "pid", "net", "ipc", "uts", "cgroup"} {
		if !slices.Contains(rep.OwnNamespaces(), ns) {
			t.Errorf("confined server shares the %s namespace with the host (own: %v)", ns, rep.OwnNamespaces())
		}
	}
	if in.Seccomp != "2" || in.NoNewPrivs != "1" || strings.Trim(in.CapEff, "0") != "" {
		t.Errorf("seccomp %q no_new_privs %q CapEff %q; want filter, 1, none", in.Seccomp, in.NoNewPrivs, in.CapEff)
	}
	if in.Read.Allowed || in.Dial.Allowed {
		t.Errorf("confined server read %s: %v, dialled %s: %v; both must be blocked", in.Read.Target, in.Read.Allowed, in.Dial.Target, in.Dial.Allowed)
	}
	// The limits as the server reads them from its own cgroup, where Node
	// and Go's runtime look.
	def := policy.Default()
	if in.Limits.Memory != fmt.Sprint(int64(def.Memory)) || in.Limits.Pids != fmt.Sprint(def.Pids) {
		t.Errorf("inside, the cgroup says memory %q and pids %q; want the default policy's %d and %d (read %v)",
			in.Limits.Memory, in.Limits.Pids, int64(def.Memory), def.Pids, in.Limits.Files)
	}
	if want := fmt.Sprintf("memory %s, pids %d", def.Memory, def.Pids); !strings.Contains(out, want) {
		t.Errorf("the report does not show the limits read inside (%q)", want)
	}
	if want := policy.Default().NoFile; in.NoFile != want {
		t.Errorf("open files limit inside is %d, want the default %d", in.NoFile, want)
	}
	if strings.Contains(out, "UNCONFINED") {
		t.Error("a confined run's report says UNCONFINED")
	}
}

// When confinement is unavailable the demo still runs, and says so loudly.
func TestDemoFallsBackLoudlyWithoutConfinement(t *testing.T) {
	opts := realOptions(t, false, nil)
	opts.ConfinementProblem = func(field.Namer) error { return errors.New("user namespaces are disabled (test)") }
	rep, out := runDemo(t, opts)
	checkSession(t, rep, out)
	if rep.Confined || rep.ConfinementError == "" {
		t.Errorf("confined=%v, confinement error %q", rep.Confined, rep.ConfinementError)
	}
	for _, want := range []string{"CONFINEMENT IS NOT AVAILABLE", "user namespaces are disabled (test)", "UNCONFINED", "mcpsandbox doctor"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report does not say %q", want)
		}
	}
}

// requireConfinement skips a confined test under -short when this user
// cannot confine here (see testenv.RequireConfinement).
func requireConfinement(t *testing.T) {
	t.Helper()
	testenv.RequireConfinement(t, func() error { return sandbox.Doctor().Problem(field.Plain) })
}
