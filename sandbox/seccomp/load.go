package seccomp

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// loadProgram installs prog (from Compile) in the calling process for all
// its threads, with seccomp(2) directly: no cgo, no libseccomp, as the C
// init stage loads it before exec. The tests' probes load programs with it.
// PR_SET_NO_NEW_PRIVS must be set first; without it a filter could be shed
// by exec'ing a setuid binary.
func loadProgram(prog []byte) error {
	n := len(prog) / 8
	if len(prog)%8 != 0 || n == 0 || n > unix.BPF_MAXINSNS {
		return fmt.Errorf("seccomp: BPF program of %d bytes is not 1..%d instructions of 8 bytes", len(prog), unix.BPF_MAXINSNS)
	}
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil {
		return fmt.Errorf("seccomp: reading no_new_privs: %w", err)
	}
	if nnp != 1 {
		return errors.New("seccomp: no_new_privs is not set; set PR_SET_NO_NEW_PRIVS before loading the filter")
	}
	// Copy into a properly aligned sock_filter array.
	filter := make([]unix.SockFilter, n)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&filter[0])), len(prog)), prog)
	fprog := unix.SockFprog{Len: uint16(n), Filter: &filter[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(filter)
	switch {
	case errno == unix.EINVAL:
		return errors.New("seccomp: the kernel rejected the filter (EINVAL): it lacks seccomp filters or TSYNC (Linux 3.17+ with CONFIG_SECCOMP_FILTER), or the program is invalid")
	case errno == unix.EACCES:
		return errors.New("seccomp: not permitted to load a filter (EACCES): set no_new_privs on this thread first")
	case errno != 0:
		return fmt.Errorf("seccomp: loading the filter: %w", errno)
	case r != 0:
		// TSYNC reports the thread that could not be synchronised.
		return fmt.Errorf("seccomp: thread %d has a different filter and could not be synchronised; load the filter before starting other filters", r)
	}
	return nil
}
