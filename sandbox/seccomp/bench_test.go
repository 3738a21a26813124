package seccomp

import (
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func BenchmarkCompileDefault(b *testing.B) {
	for b.Loop() {
		if _, err := Compile("default", unixOnly, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadDefault measures loadProgram of the default profile in a
// fresh probe process (ns/load); ns/op includes starting the probe.
func BenchmarkLoadDefault(b *testing.B) {
	prog := compileOrFail(b, "default", unixOnly, false)
	var total float64
	for b.Loop() {
		out, st := runProbe(b, prog, "bench", probeBenchEnv+"=load:1")
		ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if !st.Success() || err != nil {
			b.Fatalf("load probe: %v %q", st, out)
		}
		total += ns
	}
	b.ReportMetric(total/float64(b.N), "ns/load")
}

// BenchmarkSyscall measures one syscall in a loop inside a probe process,
// with no filter, a one-instruction allow-all filter (the fixed cost of
// having any filter), the default filter (binary tree, as shipped) and the
// same profile in libseccomp's priority order. The ns/call metric is the probe's
// own timing; ns/op also includes starting the probe once.
//   - getpid, read: always allowed, so the kernel's action cache skips the
//     filter entirely;
//   - ioctl: FIONBIO, as libuv sets non-blocking mode; runs the prologue's
//     cmd check and then libseccomp's program;
//   - personality: an argument rule in libseccomp's program;
//   - ptrace: refused, so the whole program runs every time;
//   - openat, openat_creat: opening and creating an empty path (ENOENT at
//     once): an argument rule (set-ID modes, modes.go);
//     open_missing: openat walking a path to ENOENT, for scale.
func BenchmarkSyscall(b *testing.B) {
	filters := []struct {
		name     string
		optimize int // 0: no filter, -1: allow all
	}{{"none", 0}, {"allow-all", -1}, {"default-tree", 2}, {"default-priority", 1}}
	for _, f := range filters {
		var prog []byte
		if f.optimize < 0 {
			var a bpfAsm
			a.ret(unix.SECCOMP_RET_ALLOW)
			prog = a.bytes()
		} else if f.optimize > 0 {
			saved := optimizeLevel
			optimizeLevel = f.optimize
			prog = compileOrFail(b, "default", unixOnly, false)
			optimizeLevel = saved
		}
		for _, call := range []string{"getpid", "read", "ioctl", "personality", "ptrace", "openat", "openat_creat", "open_missing"} {
			b.Run(f.name+"/"+call, func(b *testing.B) {
				out, st := runProbe(b, prog, "bench", probeBenchEnv+"="+call+":"+strconv.Itoa(b.N))
				if !st.Success() {
					b.Fatalf("bench probe: %v %q", st, out)
				}
				ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
				if err != nil {
					b.Fatalf("bench probe output %q", out)
				}
				b.ReportMetric(ns/float64(b.N), "ns/call")
			})
		}
	}
}
