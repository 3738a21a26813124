package initstage

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

// Zygote is the init stage zygote.c forked before the Go runtime started.
// The first sandbox it fits adopts it; any other start discards it.
type Zygote struct {
	sock   int // to the intermediate and the init
	mid    int // the intermediate, this process's child
	userns bool
}

var zygoteTaken sync.Once

// TakeZygote hands out the pre-forked init stage once; nil when there is none.
func TakeZygote() *Zygote {
	var z *Zygote
	zygoteTaken.Do(func() {
		if C.mcpsandbox_zygote.sock >= 0 {
			z = &Zygote{sock: int(C.mcpsandbox_zygote.sock), mid: int(C.mcpsandbox_zygote.mid), userns: C.mcpsandbox_zygote.userns != 0}
			C.mcpsandbox_zygote.sock = -1
		}
	})
	return z
}

// Fits reports whether the zygote has exactly the namespaces cfg asks for;
// cgroupFD >= 0 (cgroup v2) asks for a start inside that cgroup, which a
// pre-forked process cannot have.
func (z *Zygote) Fits(cfg *Config, cgroupFD int) bool {
	return !cfg.HostNetNS && z.userns == cfg.UserNS && cgroupFD < 0
}

// Discard ends the zygote: the init reads EOF and exits, the intermediate
// follows and is reaped here.
func (z *Zygote) Discard() {
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

// Adopted is a zygote that became a sandbox's init stage.
type Adopted struct {
	Pid   int
	pidfd int
	mid   int
}

// Adopt waits for the intermediate's report, maps the ids of a user
// namespace and hands the init its descriptors (the exec'd init stage's
// 0–4). Until the descriptors are sent nothing is committed: on error the
// caller discards the zygote and starts an init stage the usual way.
func (z *Zygote) Adopt(cfg *Config, files Files) (*Adopted, error) {
	// The intermediate reports within a millisecond of this process's start;
	// a hung one must not hang the sandbox's start.
	tv := unix.NsecToTimeval(int64(AdoptTimeout))
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
	a := &Adopted{Pid: int(rep.pid), pidfd: pidfd, mid: z.mid}
	if cfg.UserNS {
		if err := writeIDMaps(a.Pid, cfg); err != nil {
			unix.Close(pidfd)
			return nil, err
		}
	}
	var rights []int
	for _, f := range files.list() {
		if f == nil {
			f = files.Report // a gap: a placeholder the init stage closes (init_main.c)
		}
		rights = append(rights, int(f.Fd()))
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
func writeIDMaps(pid int, cfg *Config) error {
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

// Signal sends sig to the init stage, through its pidfd.
func (a *Adopted) Signal(sig os.Signal) error {
	err := unix.PidfdSendSignal(a.pidfd, sig.(syscall.Signal), nil, 0)
	if errors.Is(err, unix.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// Wait waits for the intermediate, whose end mirrors the init's.
func (a *Adopted) Wait() (unix.WaitStatus, error) {
	defer unix.Close(a.pidfd)
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(a.mid, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return ws, fmt.Errorf("waiting for the init stage: %v", err)
		}
		return ws, nil
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

// ZygotePending reports whether zygote.c forked an init stage at start that
// no sandbox has taken yet.
func ZygotePending() bool { return C.mcpsandbox_zygote.sock >= 0 }
