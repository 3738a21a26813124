package sandbox

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// sbxSpec is a default confinement as `run` would ask for it, with smaller
// limits so tests stay light.
func sbxSpec(args ...string) Spec {
	return Spec{
		Name:    "sbxtest",
		Args:    args,
		TmpSize: 8 << 20,
		NoFile:  256,
		Seccomp: "default",
		Memory:  256 << 20,
		Pids:    64,
	}
}

func sbxLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(sbxTestWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type sbxTestWriter struct{ t *testing.T }

func (w sbxTestWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// sbxRun runs spec to completion with empty stdin and returns its output.
func sbxRun(t *testing.T, spec Spec) (stdout, stderr string, ex Exit) {
	t.Helper()
	return sbxRunLogged(t, spec, sbxLogger(t))
}

// sbxRunLogged is sbxRun with Start logging to log.
func sbxRunLogged(t *testing.T, spec Spec, log *slog.Logger) (stdout, stderr string, ex Exit) {
	t.Helper()
	p, err := Start(spec, log)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer p.Close()
	p.Stdin().Close()
	collected := sbxCollect(p)
	select {
	case <-p.Done():
	case <-time.After(60 * time.Second):
		p.Kill()
		_, errOut := collected()
		t.Fatalf("sandboxed %v did not finish within 60s; stderr: %s", spec.Args, errOut)
	}
	stdout, stderr = collected()
	return stdout, stderr, p.Exit()
}

// sbxCollect copies p's stdout and stderr; the function it returns waits
// for both to end and returns them.
func sbxCollect(p Process) func() (stdout, stderr string) {
	var out, errb bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); io.Copy(&out, p.Stdout()) }()
	go func() { defer wg.Done(); io.Copy(&errb, p.Stderr()) }()
	return func() (string, string) {
		wg.Wait()
		return out.String(), errb.String()
	}
}

// sbxShell runs a shell script confined and fails the test unless it exits 0.
func sbxShell(t *testing.T, spec Spec, script string) string {
	t.Helper()
	spec.Args = []string{"/bin/sh", "-c", script}
	out, errOut, ex := sbxRun(t, spec)
	if ex.Failed() {
		t.Fatalf("script %s: %v\nstdout:\n%s\nstderr:\n%s", script, ex, out, errOut)
	}
	return out
}

// requireConfinement skips a confined test under -short when this user
// cannot confine here (see testenv.RequireConfinement).
func requireConfinement(t *testing.T) {
	t.Helper()
	testenv.RequireConfinement(t, func() error { return Doctor().Problem(field.Plain) })
}
