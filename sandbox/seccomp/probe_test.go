package seccomp

// The seccomp probe: the test binary re-executed with MCPSANDBOX_SECCOMP_PROBE
// set loads the BPF program it finds on fd 3 (none: no filter, the control)
// and then tries syscalls, execs a program, or runs a benchmark loop. It is
// dispatched from init, so it runs before anything else in the test binary.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	probeEnv      = "MCPSANDBOX_SECCOMP_PROBE"       // calls | exec | x32 | bench
	probeCallsEnv = "MCPSANDBOX_SECCOMP_PROBE_CALLS" // comma-separated probe names
	probeArgvEnv  = "MCPSANDBOX_SECCOMP_PROBE_ARGV"  // JSON argv for exec
	probeBenchEnv = "MCPSANDBOX_SECCOMP_PROBE_BENCH" // syscall:iterations
)

func init() {
	if mode := os.Getenv(probeEnv); mode != "" {
		os.Exit(seccompProbeMain(mode))
	}
}

func seccompProbeMain(mode string) int {
	runtime.LockOSThread()
	probeDir = os.Getenv(probeDirEnv)
	prog, err := io.ReadAll(os.NewFile(3, "bpf"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe: reading the program:", err)
		return 2
	}
	if len(prog) > 0 {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			fmt.Fprintln(os.Stderr, "probe: no_new_privs:", err)
			return 2
		}
		start := time.Now()
		if err := loadProgram(prog); err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			return 2
		}
		probeLoadTime = time.Since(start)
	}
	switch mode {
	case "calls":
		results := map[string]string{}
		for _, name := range strings.Split(os.Getenv(probeCallsEnv), ",") {
			probe, ok := seccompProbes[name]
			if !ok {
				fmt.Fprintln(os.Stderr, "probe: unknown probe", name)
				return 2
			}
			results[name] = probeResult(probe())
		}
		json.NewEncoder(os.Stdout).Encode(results)
	case "exec":
		var argv []string
		if err := json.Unmarshal([]byte(os.Getenv(probeArgvEnv)), &argv); err != nil || len(argv) == 0 {
			fmt.Fprintln(os.Stderr, "probe: bad argv", err)
			return 2
		}
		env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, probeEnv) })
		err := unix.Exec(argv[0], argv, env)
		fmt.Fprintln(os.Stderr, "probe: exec:", err)
		return 3
	case "x32":
		// x32 getpid: the filter must kill the process before this returns.
		_, _, errno := unix.RawSyscall(unix.SYS_GETPID|x32SyscallBit, 0, 0, 0)
		fmt.Println("survived x32 syscall:", probeResult(errnoOrNil(errno)))
	case "bench":
		return probeBench(os.Getenv(probeBenchEnv))
	default:
		fmt.Fprintln(os.Stderr, "probe: unknown mode", mode)
		return 2
	}
	return 0
}

func probeResult(err error) string {
	var errno unix.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	}
	return "error: " + err.Error()
}

func errnoOrNil(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

var probeLoadTime time.Duration // how long loadProgram took in this probe

// probeBench runs one syscall in a loop and prints the ns it took; "load"
// prints the ns loadProgram took instead.
func probeBench(spec string) int {
	name, count, _ := strings.Cut(spec, ":")
	if name == "load" {
		fmt.Println(probeLoadTime.Nanoseconds())
		return 0
	}
	n, err := strconv.Atoi(count)
	if err != nil || n <= 0 {
		fmt.Fprintln(os.Stderr, "probe: bad bench spec", spec)
		return 2
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		return 2
	}
	zero, err := unix.Open("/dev/zero", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		return 2
	}
	var buf [1]byte
	one := 1
	missing, empty := cstr("/nonexistent-mcpsandbox/f"), cstr("")
	calls := map[string]func(){
		"getpid":      func() { unix.RawSyscall(unix.SYS_GETPID, 0, 0, 0) },
		"read":        func() { unix.RawSyscall(unix.SYS_READ, uintptr(zero), uintptr(unsafe.Pointer(&buf[0])), 1) },
		"ioctl":       func() { unix.RawSyscall(unix.SYS_IOCTL, uintptr(p[0]), fionbio, uintptr(unsafe.Pointer(&one))) },
		"personality": func() { unix.RawSyscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0) },
		"ptrace":      func() { unix.RawSyscall(unix.SYS_PTRACE, unix.PTRACE_PEEKUSR, 0x3fffffff, 0) },
		// An empty path fails at once (ENOENT, no path walk), so the filter's
		// share of the cost shows; open_missing walks a path, for scale.
		"openat": func() {
			unix.RawSyscall6(unix.SYS_OPENAT, atFdcwd, empty, unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
		},
		"openat_creat": func() {
			unix.RawSyscall6(unix.SYS_OPENAT, atFdcwd, empty, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644, 0, 0)
		},
		"open_missing": func() {
			unix.RawSyscall6(unix.SYS_OPENAT, atFdcwd, missing, unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
		},
	}
	call, ok := calls[name]
	if !ok {
		fmt.Fprintln(os.Stderr, "probe: unknown bench call", name)
		return 2
	}
	start := time.Now()
	for range n {
		call()
	}
	fmt.Println(time.Since(start).Nanoseconds())
	return 0
}

// runProbe re-executes the test binary in a probe role with prog on fd 3
// (nil prog: no filter).
func runProbe(t testing.TB, prog []byte, mode string, env ...string) ([]byte, *os.ProcessState) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "bpf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(prog); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), append([]string{probeEnv + "=" + mode, probeDirEnv + "=" + t.TempDir()}, env...)...)
	cmd.ExtraFiles = []*os.File{f}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("probe %s: %v", mode, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("probe %s did not finish within the deadline", mode)
	}
	if s := stderr.String(); s != "" {
		t.Logf("probe %s stderr:\n%s", mode, s)
	}
	return out, cmd.ProcessState
}

// probeCalls runs the named probes under prog and returns name → result.
func probeCalls(t testing.TB, prog []byte, names []string) map[string]string {
	t.Helper()
	out, st := runProbe(t, prog, "calls", probeCallsEnv+"="+strings.Join(names, ","))
	if !st.Success() {
		t.Fatalf("probe exited with %v; output %q", st, out)
	}
	results := map[string]string{}
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("probe output %q: %v", out, err)
	}
	return results
}

// killedBySIGSYS reports whether the probe died from seccomp's kill action.
func killedBySIGSYS(st *os.ProcessState) bool {
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGSYS
}
