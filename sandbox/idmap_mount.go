package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
	"golang.org/x/sys/unix"
)

// A root supervisor runs each server as a dynamic uid that owns nothing on
// the host, so `--rw ~/notes` would be useless to it. An idmapped mount
// (Linux 5.12+) shows the grant's owner as the server instead: inside the
// mount the owner's files are the server's, and what the server creates
// lands on disk as the owner's. Set-ID files it cannot make: the default
// seccomp profile refuses set-ID modes (seccomp/modes.go). A user's grant
// never maps gid 0; root's own grants are lent on stricter terms
// (idmap_root.go).
//
// Only the owner's uid and gid are mapped. The kernel refuses writes through
// an idmapped mount to an inode whose uid or gid it cannot map, so files of
// other users or groups inside the grant (a root-owned file, a dir of group
// docker) stay readable by their "other" bits but cannot be written.

// setTreeIDMap makes every mount of a detached tree idmapped by userns.
func setTreeIDMap(tree, userns int) error {
	return unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE,
		&unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(userns)})
}

// probeNS is a user namespace the supervisor keeps for probing whether a
// file system takes idmapped mounts; its mapping is never used on a mount
// that is attached anywhere. A failure is not kept: it may be passing
// (a full pids limit, say).
var probeNS struct {
	sync.Mutex
	fd int // 0: not made yet
}

func probeUserns() (int, error) {
	probeNS.Lock()
	defer probeNS.Unlock()
	if probeNS.fd > 0 {
		return probeNS.fd, nil
	}
	fd, err := initstage.NewUserns("65534 65534 1\n", "65534 65534 1\n")
	if err != nil {
		return -1, err
	}
	probeNS.fd = fd
	return fd, nil
}

// probeIDMap tries an idmapped copy of the mount tree at fd (never
// attached) and says why it cannot be made, or nil.
func probeIDMap(fd int) error {
	userns, err := probeUserns()
	if err != nil {
		return fmt.Errorf("creating a user namespace for it failed: %v", err)
	}
	tree, err := cloneTree(fd, "")
	if err != nil {
		return fmt.Errorf("copying the mount failed: %v", err)
	}
	defer unix.Close(tree)
	err = setTreeIDMap(tree, userns)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.EOPNOTSUPP):
		return fmt.Errorf("its file system (%s) does not support idmapped mounts (%s)", fsName(fd), errnoName(err))
	case errors.Is(err, unix.ENOSYS):
		return fmt.Errorf("the kernel lacks idmapped mounts (Linux 5.12+) (%s)", errnoName(err))
	}
	return fmt.Errorf("the kernel refused an idmapped mount of %s (%s)", fsName(fd), errnoName(err))
}

func errnoName(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		if name := unix.ErrnoName(errno); name != "" {
			return name + ": " + errno.Error()
		}
	}
	return err.Error()
}

// fsName names the file system of the mount fd lies on, as mountinfo says.
func fsName(fd int) string {
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &stx); err == nil && stx.Mask&unix.STATX_MNT_ID != 0 {
		if name := mountinfoFSType(stx.Mnt_id); name != "" {
			return name
		}
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err == nil {
		return fmt.Sprintf("magic %#x", sfs.Type)
	}
	return "unknown"
}

// mountinfoFSType returns the fstype field of mount id in mountinfo.
func mountinfoFSType(id uint64) string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	want := strconv.FormatUint(id, 10) + " "
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, want) {
			continue
		}
		if _, rest, ok := strings.Cut(line, " - "); ok {
			if fields := strings.Fields(rest); len(fields) > 0 {
				return fields[0]
			}
		}
	}
	return ""
}
