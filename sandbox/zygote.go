package sandbox

/*
#include <stdint.h>
#include "zygote.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// zygote is the init stage zygote.c forked before the Go runtime started.
// The first confined Start it fits adopts it; any other Start discards it.
type zygote struct {
	sock   int // to the intermediate and the init
	mid    int // the intermediate, this process's child
	userns bool
}

var zygoteTaken sync.Once

// takeZygote hands out the pre-forked init stage once; nil when there is none.
func takeZygote() *zygote {
	var z *zygote
	zygoteTaken.Do(func() {
		if C.mcpsandbox_zygote.sock >= 0 {
			z = &zygote{sock: int(C.mcpsandbox_zygote.sock), mid: int(C.mcpsandbox_zygote.mid), userns: C.mcpsandbox_zygote.userns != 0}
			C.mcpsandbox_zygote.sock = -1
		}
	})
	return z
}

// fits reports whether the zygote has exactly the namespaces cfg asks for.
func (z *zygote) fits(cfg *initConfig, cgroupFD int) bool {
	return !cfg.NetHost && z.userns == cfg.UserNS && cgroupFD < 0
}

// discard ends the zygote: the init reads EOF and exits, the intermediate
// follows and is reaped here.
func (z *zygote) discard() {
	unix.Close(z.sock)
	go func() {
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(z.mid, &ws, 0, nil); err != unix.EINTR {
				return
			}
		}
	}()
}

// adopted is a zygote that became a sandbox's init stage.
type adopted struct {
	pid   int
	pidfd int
	mid   int
}

// adopt waits for the intermediate's report, maps the ids of a user
// namespace and hands the init its descriptors (stdin, stdout, stderr,
// config, report: the exec'd init stage's 0–4). Until the descriptors are
// sent nothing is committed: on error the caller discards the zygote and
// starts an init stage the usual way.
func (z *zygote) adopt(cfg *initConfig, fds [5]*os.File) (*adopted, error) {
	// The intermediate reports within a millisecond of this process's start;
	// a hung one must not hang Start.
	tv := unix.NsecToTimeval(int64(setupTimeout))
	unix.SetsockoptTimeval(z.sock, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	var rep C.struct_zygote_report
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&rep)), unsafe.Sizeof(rep))
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, err := recvmsg(z.sock, buf, oob)
	if err != nil || n != len(buf) {
		return nil, fmt.Errorf("no report from the pre-forked init stage (%v)", err)
	}
	pidfd := -1
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil && len(msgs) == 1 {
		if fds, err := unix.ParseUnixRights(&msgs[0]); err == nil && len(fds) == 1 {
			pidfd = fds[0]
		}
	}
	if rep.err != 0 || pidfd < 0 {
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
		return nil, fmt.Errorf("the pre-forked init stage failed: %v", syscall.Errno(rep.err))
	}
	a := &adopted{pid: int(rep.pid), pidfd: pidfd, mid: z.mid}
	if cfg.UserNS {
		if err := writeIDMaps(a.pid, cfg); err != nil {
			unix.Close(pidfd)
			return nil, err
		}
	}
	rights := make([]int, len(fds))
	for i, f := range fds {
		rights[i] = int(f.Fd())
	}
	if err := unix.Sendmsg(z.sock, []byte{0}, unix.UnixRights(rights...), nil, unix.MSG_NOSIGNAL); err != nil {
		unix.Close(pidfd)
		return nil, fmt.Errorf("handing descriptors to the pre-forked init stage: %v", err)
	}
	unix.Close(z.sock)
	return a, nil
}

// writeIDMaps maps the sandbox user's ids to the caller's, as
// SysProcAttr.UidMappings does for the exec'd init stage.
func writeIDMaps(pid int, cfg *initConfig) error {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	for _, m := range []struct{ file, data string }{
		{"setgroups", "deny"},
		{"uid_map", fmt.Sprintf("%d %d 1", cfg.UID, os.Getuid())},
		{"gid_map", fmt.Sprintf("%d %d 1", cfg.GID, os.Getgid())},
	} {
		if err := os.WriteFile(dir+m.file, []byte(m.data), 0); err != nil {
			return fmt.Errorf("user namespace of the pre-forked init stage: %v", err)
		}
	}
	return nil
}

func (a *adopted) signal(sig os.Signal) error {
	err := unix.PidfdSendSignal(a.pidfd, sig.(syscall.Signal), nil, 0)
	if errors.Is(err, unix.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// wait waits for the intermediate, whose end mirrors the init's.
func (a *adopted) wait() Exit {
	defer unix.Close(a.pidfd)
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(a.mid, &ws, 0, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return Exit{Code: -1, SetupErr: fmt.Errorf("waiting for the init stage: %v", err)}
		case ws.Signaled():
			return Exit{Code: -1, Signal: ws.Signal()}
		}
		return Exit{Code: ws.ExitStatus()}
	}
}

// recvmsg retries on EINTR: Go's preemption signals interrupt a socket read
// that has a timeout.
func recvmsg(sock int, buf, oob []byte) (n, oobn int, err error) {
	for {
		n, oobn, _, _, err = unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			return n, oobn, err
		}
	}
}

// zygotePending reports whether zygote.c forked an init stage at start that
// no Start has taken yet.
func zygotePending() bool { return C.mcpsandbox_zygote.sock >= 0 }
