package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// A server that keeps the caller's uid (a user namespace) draws on that
// user's per-user kernel budgets. It may take its share, never the whole:
// while it holds all it can get, the supervisor's user (the host user, the
// same uid) must still get its own. TestConfinedUnprivilegedSupervisor runs
// this as an unprivileged uid, the path this is about; as root the server
// has a uid of its own.

// sbxHoldEnv makes the test binary take every unit of one budget it can,
// print "held N ERRNO" and hold them until its stdin closes.
const sbxHoldEnv = "MCPSANDBOX_SBX_HOLD"

// sbxBudgets are the per-user budgets the sandbox bounds: how the server
// takes one unit, and how the host user takes (and returns) one.
var sbxBudgets = map[string]struct {
	take func(i int) error
	host func() error
}{
	"inotify": {
		take: func(int) error { _, err := unix.InotifyInit1(unix.IN_CLOEXEC); return err },
		host: func() error {
			fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
			if err == nil {
				unix.Close(fd)
			}
			return err
		},
	},
	// Every POSIX timer holds a queued signal (RLIMIT_SIGPENDING).
	"sigpending": {
		take: func(int) error { _, err := sbxTimerCreate(); return err },
		host: func() error {
			id, err := sbxTimerCreate()
			if err == nil {
				unix.Syscall(unix.SYS_TIMER_DELETE, uintptr(id), 0, 0)
			}
			return err
		},
	},
	// Pipe buffer pages, at the largest size (1MiB) each.
	"pipes": {
		take: func(int) error { _, err := sbxBigPipe(); return err },
		host: func() error {
			p, err := sbxBigPipe()
			if err == nil {
				unix.Close(p[0])
				unix.Close(p[1])
			}
			return err
		},
	},
	// Unix descriptors in flight (sent over a socket, not yet received):
	// charged to the user and compared with the sender's RLIMIT_NOFILE, so
	// while the server holds as many as its NoFile, a program of the same
	// user with a lower limit cannot pass one. The host side lowers its own
	// soft limit below the server's for the attempt.
	"unixfds": {
		take: func(int) error { return sbxSendFds(&sbxHeldPair, 64) },
		host: func() error {
			var lim, low unix.Rlimit
			if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
				return err
			}
			low = lim
			low.Cur = sbxHostNoFile
			if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
				return err
			}
			defer unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
			var pair [2]int
			err := sbxSendFds(&pair, 1)
			unix.Close(pair[0])
			unix.Close(pair[1])
			return err
		},
	},
	// Message queues' bytes (RLIMIT_MSGQUEUE); the sandbox's IPC namespace
	// is its own, the budget is the user's.
	"mqueue": {
		take: func(i int) error { return sbxMqOpen(fmt.Sprintf("held-%d", i), false) },
		host: func() error { return sbxMqOpen(fmt.Sprintf("mcpsandbox-test-%d", os.Getpid()), true) },
	},
}

// sbxHeldPair is the server's socket pair whose far end never reads.
var sbxHeldPair [2]int

// sbxHostNoFile is the host side's soft RLIMIT_NOFILE for its attempt:
// below the server's NoFile in the test, above what the test process has
// open.
const sbxHostNoFile = 200

// sbxSendFds sends n copies of one descriptor over *pair (made on first
// use), which nobody receives: n more descriptors in flight.
func sbxSendFds(pair *[2]int, n int) error {
	if pair[0] == 0 && pair[1] == 0 {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		*pair = fds
	}
	fds := make([]int, n)
	for i := range fds {
		fds[i] = pair[0]
	}
	return unix.Sendmsg(pair[1], []byte{0}, unix.UnixRights(fds...), nil, unix.MSG_DONTWAIT)
}

func sbxBigPipe() ([2]int, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return p, err
	}
	if _, err := unix.FcntlInt(uintptr(p[0]), unix.F_SETPIPE_SZ, 1<<20); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return p, err
	}
	return p, nil
}

func sbxTimerCreate() (int32, error) {
	// struct sigevent: value, signo, notify (SIGEV_NONE = 1), padding.
	var ev [16]int32
	ev[3] = 1
	var id int32
	_, _, errno := unix.Syscall(unix.SYS_TIMER_CREATE, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&ev)), uintptr(unsafe.Pointer(&id)))
	if errno != 0 {
		return 0, errno
	}
	return id, nil
}

// sbxMqOpen creates a queue of the largest size an unprivileged user may
// ask for (10 messages of 8KiB), and removes it again when unlink is set.
func sbxMqOpen(name string, unlink bool) error {
	attr := [8]int64{0, 10, 8192}
	p, _ := unix.BytePtrFromString(name)
	fd, _, errno := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(p)), unix.O_CREAT|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC, 0o600, uintptr(unsafe.Pointer(&attr)), 0, 0)
	if errno != 0 {
		return errno
	}
	if unlink {
		unix.Close(int(fd))
		unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(p)), 0, 0)
	}
	return nil
}

// runSbxHold is the server's side.
func runSbxHold(kind string) int {
	b, ok := sbxBudgets[kind]
	if !ok {
		fmt.Println("unknown budget", kind)
		return 2
	}
	n := 0
	var err error
	for ; n < 1<<20; n++ {
		if err = b.take(n); err != nil {
			break
		}
	}
	fmt.Printf("held %d %v\n", n, err)
	bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}

func TestConfinedUserBudgetsLeaveTheHostUsersShare(t *testing.T) {
	requireConfinement(t)
	// A sandbox bug must not let the exhaustion reach the machine.
	testenv.OuterLimit(t, 1<<30, 256)
	for _, kind := range []string{"inotify", "sigpending", "mqueue"} {
		t.Run(kind, func(t *testing.T) {
			if err := sbxHoldAndTry(t, kind, sbxSpec(os.Args[0])); err != nil {
				t.Errorf("while the server holds all the %s budget it can, the host user (uid %d) gets %v: the sandbox took the user's whole budget", kind, os.Getuid(), err)
			}
		})
	}
}

// Pipe buffer pages are a documented limit (doctor's per-user budgets
// line, README): in a user namespace the server can take the user's soft
// limit, after which the user's F_SETPIPE_SZ fails; a root supervisor's
// server has a uid of its own. When this fails, the limit is gone: update
// the doctor line and the README.
func TestConfinedPipePagesAreTheUsersInAUserNamespace(t *testing.T) {
	requireConfinement(t)
	testenv.OuterLimit(t, 1<<30, 256)
	pages, err := readSysctl("/proc/sys/fs/pipe-user-pages-soft")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(pages)
	spec := sbxSpec(os.Args[0])
	spec.NoFile = uint64(2*(n/256+1) + 64) // enough 1MiB pipes to pass the soft limit
	err = sbxHoldAndTry(t, "pipes", spec)
	switch {
	case os.Geteuid() == 0 && err != nil:
		t.Errorf("with a uid of its own, the server took root's pipe pages: %v", err)
	case os.Geteuid() != 0 && !errors.Is(err, unix.EPERM):
		t.Errorf("in a user namespace the server no longer exhausts the user's pipe pages (host F_SETPIPE_SZ: %v): the documented limit is gone", err)
	default:
		t.Logf("host F_SETPIPE_SZ while the server holds its pipes: %v", err)
	}
}

func TestConfinedUnixFdsInFlightAreTheUsersInAUserNamespace(t *testing.T) {
	requireConfinement(t)
	testenv.OuterLimit(t, 1<<30, 256)
	spec := sbxSpec(os.Args[0])
	spec.NoFile = 2 * sbxHostNoFile
	err := sbxHoldAndTry(t, "unixfds", spec)
	switch {
	case os.Geteuid() == 0 && err != nil:
		t.Errorf("with a uid of its own, the server's descriptors in flight were charged to root: %v", err)
	case os.Geteuid() != 0 && !errors.Is(err, unix.ETOOMANYREFS):
		t.Errorf("in a user namespace the server's descriptors in flight no longer count against the user (host sendmsg: %v): the documented limit is gone", err)
	default:
		t.Logf("host sendmsg of one descriptor while the server holds its own in flight: %v", err)
	}
}

// sbxHoldAndTry starts the holder for kind confined by spec and, while it
// holds all it could take, takes one unit as the host user. Closing the
// sandbox returns the budget.
func sbxHoldAndTry(t *testing.T, kind string, spec Spec) error {
	t.Helper()
	spec.Env = []string{sbxHoldEnv + "=" + kind}
	p, err := Start(spec, sbxLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	if !strings.HasPrefix(line, "held ") {
		t.Fatalf("the server did not report what it held: %q %v (%v)", line, err, escapeExitSoFar(p))
	}
	t.Logf("server: %s", strings.TrimSpace(line))
	return sbxBudgets[kind].host()
}
