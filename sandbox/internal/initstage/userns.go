package initstage

/*
#define INIT_STAGE_GO
#include "init.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// NewUserns returns a descriptor of a fresh user namespace with the given
// uid_map and gid_map (kernel format: "inside outside count" lines). It only
// carries a mapping for an idmapped mount: no process stays in it.
// Writing arbitrary maps needs CAP_SETUID/CAP_SETGID, i.e. root. The child
// that holds it meanwhile is userns_holder.c's.
func NewUserns(uidMap, gidMap string) (int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return -1, err
	}
	defer r.Close()
	pid := int(C.mcpsandbox_userns_holder(C.int(w.Fd())))
	w.Close()
	if pid < 0 {
		return -1, fmt.Errorf("clone(CLONE_NEWUSER): %w", syscall.Errno(-pid))
	}
	defer func() {
		unix.Kill(pid, unix.SIGKILL)
		for {
			if _, err := unix.Wait4(pid, nil, 0, nil); err != unix.EINTR {
				break
			}
		}
	}()
	buf := make([]byte, 24)
	n, err := r.Read(buf)
	if err != nil {
		return -1, fmt.Errorf("the user namespace holder did not report its pid: %v", err)
	}
	procPid := strings.TrimSpace(string(buf[:n]))
	if _, err := strconv.Atoi(procPid); err != nil {
		return -1, fmt.Errorf("the user namespace holder reported pid %q", procPid)
	}
	dir := "/proc/" + procPid
	for _, m := range []struct{ file, text string }{{"uid_map", uidMap}, {"gid_map", gidMap}} {
		if err := writeMap(dir+"/"+m.file, m.text); err != nil {
			return -1, fmt.Errorf("writing %s %q: %w", m.file, m.text, err)
		}
	}
	fd, err := unix.Open(dir+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening the user namespace: %w", err)
	}
	return fd, nil
}

// writeMap writes a whole map in the single write(2) the kernel requires.
func writeMap(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(text))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
