package seccomp

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// prologue is a short hand-written BPF program run before
// libseccomp's. It does two things libseccomp 2.5 cannot express:
//   - ioctl(fd, TIOCSTI|TIOCLINUX) is refused, comparing only the low 32 bits
//     of cmd (the kernel's unsigned int), so garbage or sign extension in the
//     upper half neither evades the check nor breaks other ioctls. libseccomp
//     drops conditional rules for a syscall that also has an unconditional one.
//   - fcntl(fd, F_SETLEASE, ...) is refused the same way: a lease needs only
//     ownership, which an idmapped grant gives the server, and stalls every
//     host open of the file for up to lease-break-time.
//   - syscalls numbered above every call the profile names get ENOSYS, so a
//     newer libc or runtime falls back instead of failing on EPERM (what runc
//     does for the same reason).
//
// For every syscall but ioctl it reads only arch and nr, so the kernel's
// per-syscall action cache (Linux 5.11+) still skips the whole filter for
// calls that are always allowed. Classic BPF jumps only forward, so
// prepending needs no change to libseccomp's program; it starts by loading
// the arch again.
type prologue struct {
	arch        archFacts
	ioctlNr     int    // -1: no ioctl check
	ioctlDeny   uint32 // SECCOMP_RET_* for the refused ioctls and fcntls
	fcntlNr     int    // -1: no fcntl check
	enosysAbove int    // -1: no ENOSYS answer
}

// Offsets in struct seccomp_data.
const (
	seccompDataNr   = 0
	seccompDataArch = 4
	seccompDataArgs = 16
)

func (p prologue) assemble() []byte {
	if p.ioctlNr < 0 && p.enosysAbove < 0 {
		return nil
	}
	afterIoctl := "end"
	if p.enosysAbove >= 0 {
		afterIoctl = "nr"
	}
	var a bpfAsm
	a.load(seccompDataArch)
	a.jumpIf(unix.BPF_JEQ, p.arch.auditArch, "", "end")
	a.load(seccompDataNr)
	if p.ioctlNr >= 0 {
		notIoctl := afterIoctl
		if p.fcntlNr >= 0 {
			notIoctl = "fcntl"
		}
		a.jumpIf(unix.BPF_JEQ, uint32(p.ioctlNr), "", notIoctl)
		a.load(p.arch.argLow32(1))
		a.jumpIf(unix.BPF_JEQ, unix.TIOCSTI, "deny", "")
		a.jumpIf(unix.BPF_JEQ, unix.TIOCLINUX, "deny", "end")
	}
	if p.fcntlNr >= 0 {
		a.label("fcntl")
		a.jumpIf(unix.BPF_JEQ, uint32(p.fcntlNr), "", afterIoctl)
		a.load(p.arch.argLow32(1))
		a.jumpIf(unix.BPF_JEQ, unix.F_SETLEASE, "deny", "end")
	}
	if p.enosysAbove >= 0 {
		a.label("nr")
		// x32 numbers (and -1) are left to libseccomp, which kills x32.
		a.jumpIf(unix.BPF_JGE, x32SyscallBit, "end", "")
		a.jumpIf(unix.BPF_JGT, uint32(p.enosysAbove), "enosys", "end")
	}
	if p.ioctlNr >= 0 {
		a.label("deny")
		a.ret(p.ioctlDeny)
	}
	if p.enosysAbove >= 0 {
		a.label("enosys")
		a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	}
	a.label("end")
	return a.bytes()
}

// argLow32 is the offset of the low 32 bits of argument i.
func (a archFacts) argLow32(i int) uint32 {
	off := uint32(seccompDataArgs + 8*i)
	if !a.littleEndian {
		off += 4
	}
	return off
}

// bpfAsm assembles classic BPF with forward conditional jumps to labels; ""
// means the next instruction.
type bpfAsm struct {
	insns  []unix.SockFilter
	jt, jf []string
	labels map[string]int
}

func (a *bpfAsm) emit(code uint16, k uint32, jt, jf string) {
	a.insns = append(a.insns, unix.SockFilter{Code: code, K: k})
	a.jt = append(a.jt, jt)
	a.jf = append(a.jf, jf)
}

func (a *bpfAsm) load(off uint32) { a.emit(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off, "", "") }
func (a *bpfAsm) ret(k uint32)    { a.emit(unix.BPF_RET|unix.BPF_K, k, "", "") }
func (a *bpfAsm) jumpIf(op uint16, k uint32, jt, jf string) {
	a.emit(unix.BPF_JMP|op|unix.BPF_K, k, jt, jf)
}

func (a *bpfAsm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.insns)
}

func (a *bpfAsm) bytes() []byte {
	out := make([]byte, 0, 8*len(a.insns))
	for i, in := range a.insns {
		if in.Code&0x07 == unix.BPF_JMP {
			in.Jt = uint8(a.offset(i, a.jt[i]))
			in.Jf = uint8(a.offset(i, a.jf[i]))
		}
		out = binary.NativeEndian.AppendUint16(out, in.Code)
		out = append(out, in.Jt, in.Jf)
		out = binary.NativeEndian.AppendUint32(out, in.K)
	}
	return out
}

func (a *bpfAsm) offset(from int, to string) uint32 {
	if to == "" {
		return 0
	}
	target, ok := a.labels[to]
	if !ok || target <= from || target-from-1 > 255 {
		panic(fmt.Sprintf("seccomp prologue: bad jump from %d to %q", from, to)) // a bug in assemble
	}
	return uint32(target - from - 1)
}
