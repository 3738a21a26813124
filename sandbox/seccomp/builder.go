package seccomp

import (
	"errors"
	"fmt"
	"io"
	"os"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

var (
	actEPERM  = libseccomp.ActErrno.SetReturnCode(int16(unix.EPERM))
	actENOSYS = libseccomp.ActErrno.SetReturnCode(int16(unix.ENOSYS))
)

// builder wraps a libseccomp filter for the native arch only.
type builder struct {
	f          *libseccomp.ScmpFilter
	logDenials bool
	def        libseccomp.ScmpAction // the filter's default, after logDenials
	maxKnown   int                   // highest syscall number the profile names
}

func newBuilder(defaultAction libseccomp.ScmpAction, logDenials bool) (*builder, error) {
	b := &builder{logDenials: logDenials, maxKnown: -1}
	b.def = b.denied(defaultAction)
	f, err := libseccomp.NewFilter(b.def)
	if err != nil {
		return nil, fmt.Errorf("seccomp: libseccomp: %w", err)
	}
	b.f = f
	// A 32-bit or x32 syscall bypasses every argument check of the native
	// filter; the process is killed rather than answered.
	if err := f.SetBadArchAction(libseccomp.ActKillProcess); err != nil {
		b.release()
		return nil, fmt.Errorf("seccomp: libseccomp: bad-arch action: %w", err)
	}
	// Binary tree over syscall numbers: O(log n) for every call that the
	// kernel's per-syscall cache cannot answer (see prologue.go).
	if err := f.SetOptimize(optimizeLevel); err != nil {
		b.release()
		return nil, fmt.Errorf("seccomp: libseccomp %s cannot optimise filters (needs 2.5.0 or later): %w", libVersion(), err)
	}
	return b, nil
}

// optimizeLevel is libseccomp's SCMP_FLTATR_CTL_OPTIMIZE; benchmarks
// may set 1 (priority order) to compare.
var optimizeLevel = 2

func (b *builder) release() { b.f.Release() }

// denied maps a refusing action to LOG when denials are only to be logged.
func (b *builder) denied(a libseccomp.ScmpAction) libseccomp.ScmpAction {
	if !b.logDenials {
		return a
	}
	switch a.SetReturnCode(0) { // the action without its errno
	case libseccomp.ActAllow, libseccomp.ActLog, libseccomp.ActNotify:
		return a
	case libseccomp.ActErrno:
		if a.GetReturnCode() == int16(unix.ENOSYS) {
			return a
		}
	}
	return libseccomp.ActLog
}

// retDenied is the raw SECCOMP_RET value for refusing with errno.
func (b *builder) retDenied(errno unix.Errno) uint32 {
	if b.logDenials {
		return unix.SECCOMP_RET_LOG
	}
	return unix.SECCOMP_RET_ERRNO | uint32(errno)
}

// resolve gives the native number of a syscall name. known is false for
// names neither libseccomp nor lateSyscalls knows; native is false for
// calls that exist only on other architectures (e.g. open on arm64).
func (b *builder) resolve(name string) (nr libseccomp.ScmpSyscall, known, native bool) {
	nr, err := libseccomp.GetSyscallFromName(name)
	if err != nil {
		late, ok := lateSyscalls[name]
		if !ok {
			return 0, false, false
		}
		nr = libseccomp.ScmpSyscall(late)
	}
	if int32(nr) < 0 { // libseccomp's pseudo number for another arch's call
		return 0, true, false
	}
	b.maxKnown = max(b.maxKnown, int(nr))
	return nr, true, true
}

// know records a name the profile decides on without a rule, for the ENOSYS
// threshold.
func (b *builder) know(name string) { b.resolve(name) }

// mustResolve is for the built-in profile, whose names must all be known.
func (b *builder) mustResolve(name string) (libseccomp.ScmpSyscall, bool, error) {
	nr, known, native := b.resolve(name)
	if !known {
		return 0, false, fmt.Errorf("seccomp default profile: syscall %q is unknown to libseccomp %s", name, libVersion())
	}
	return nr, native, nil
}

func (b *builder) allow(name string) error { return b.allowHot(name, 0) }

// allowHot allows name unconditionally; priority > 0 moves it forward when
// the filter is not a binary tree.
func (b *builder) allowHot(name string, priority uint8) error {
	nr, ok, err := b.mustResolve(name)
	if err != nil || !ok {
		return err
	}
	if err := b.f.AddRule(nr, libseccomp.ActAllow); err != nil {
		return fmt.Errorf("seccomp default profile: allow %s: %w", name, err)
	}
	if priority > 0 {
		return b.prioritize(name, priority)
	}
	return nil
}

// allowIf allows name when every condition holds; several calls for one
// name are alternatives.
func (b *builder) allowIf(name string, conds ...libseccomp.ScmpCondition) error {
	nr, ok, err := b.mustResolve(name)
	if err != nil || !ok {
		return err
	}
	if err := b.f.AddRuleConditional(nr, libseccomp.ActAllow, conds); err != nil {
		return fmt.Errorf("seccomp default profile: allow %s with argument conditions: %w", name, err)
	}
	return nil
}

// prioritize moves name forward when the filter is not a binary tree.
func (b *builder) prioritize(name string, priority uint8) error {
	nr, ok, err := b.mustResolve(name)
	if err != nil || !ok {
		return err
	}
	if err := b.f.SetSyscallPriority(nr, priority); err != nil {
		return fmt.Errorf("seccomp default profile: priority of %s: %w", name, err)
	}
	return nil
}

// answerENOSYS makes name look unimplemented, so callers use their fallback.
func (b *builder) answerENOSYS(name string) error {
	nr, ok, err := b.mustResolve(name)
	if err != nil || !ok {
		return err
	}
	if err := b.f.AddRule(nr, actENOSYS); err != nil {
		return fmt.Errorf("seccomp default profile: %s → ENOSYS: %w", name, err)
	}
	return nil
}

// argMaskedEq holds when (arg[index] & mask) == value. Masking with low32
// compares what the kernel sees of an int argument, whatever the caller left
// in the upper half of the register.
func argMaskedEq(index uint, mask, value uint64) libseccomp.ScmpCondition {
	c, err := libseccomp.MakeCondition(index, libseccomp.CompareMaskedEqual, mask, value)
	if err != nil {
		panic(fmt.Sprintf("seccomp: bad built-in condition: %v", err)) // constant input
	}
	return c
}

// export returns libseccomp's BPF. It goes through a memfd: libseccomp 2.5.4
// cannot export to memory, and a pipe would need a reader goroutine.
func (b *builder) export() ([]byte, error) {
	fd, err := unix.MemfdCreate("mcpsandbox-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("seccomp: memfd for the BPF program: %w", err)
	}
	f := os.NewFile(uintptr(fd), "mcpsandbox-seccomp")
	defer f.Close()
	if err := b.f.ExportBPF(f); err != nil {
		return nil, fmt.Errorf("seccomp: libseccomp could not generate the BPF program: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("seccomp: reading the BPF program back: %w", err)
	}
	prog, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("seccomp: reading the BPF program back: %w", err)
	}
	if len(prog) == 0 || len(prog)%8 != 0 {
		return nil, errors.New("seccomp: libseccomp produced an empty or truncated BPF program")
	}
	return prog, nil
}
