package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// stagingDir is where the new root is attached while it is built. It only
// changes this private mount namespace, and everything taken from the host
// is copied (as detached mount trees) before it is covered.
const stagingDir = "/tmp"

// Mount attribute sets.
const (
	attrRO   = unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV
	attrRW   = unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV
	attrDev  = unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC
	attrProc = unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC
)

// mergedUsrLinks are the top-level names that merged-/usr hosts make
// symlinks into /usr; on other hosts they are directories bound read-only.
var mergedUsrLinks = []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"}

// devNodes are the only devices the server gets.
var devNodes = []string{"null", "zero", "full", "random", "urandom"}

// hostTree is a detached copy of something on the host.
type hostTree struct {
	fd  int
	dir bool
}

func closeTrees(trees []hostTree) {
	for _, t := range trees {
		if t.fd > 0 {
			unix.Close(t.fd)
		}
	}
}

// systemSources is what every sandbox takes from the host, whatever its
// configuration: opened before the staging root covers any of it.
type systemSources struct {
	usr      hostTree
	topLinks map[string]string   // name → symlink target
	topDirs  map[string]hostTree // name → tree (non-merged /usr)
	etc      etcFiles
	dev      map[string]hostTree
}

func (s *systemSources) close() {
	trees := append([]hostTree{s.usr}, s.etc.dirs...)
	for _, t := range s.topDirs {
		trees = append(trees, t)
	}
	for _, t := range s.dev {
		trees = append(trees, t)
	}
	closeTrees(trees)
}

// configSources is what the configuration adds from the host.
type configSources struct {
	binds []hostTree // parallel to cfg.Binds
	exe   *hostTree
}

func (s *configSources) close() {
	trees := append([]hostTree(nil), s.binds...)
	if s.exe != nil {
		trees = append(trees, *s.exe)
	}
	closeTrees(trees)
}

// preparedRoot is the part of the new root that no configuration changes
// (/usr, /etc's host files, /dev, /proc), built while the init stage waits
// for its configuration. Nothing in it comes from the configuration or from
// anything a server could have touched: only host system paths.
type preparedRoot struct {
	root int   // the staging tmpfs, O_PATH; -1 when not built
	err  error // building it failed; reported once the configuration is in
}

// prepareRoot builds the configuration-independent part of the new root at
// stagingDir. Every sandbox's root is built this way, speculative or not,
// so the pre-forked and the re-exec'd init stage build the same one.
func prepareRoot() *preparedRoot {
	p := &preparedRoot{root: -1}
	p.err = p.build()
	return p
}

func (p *preparedRoot) build() error {
	// Mount events must not propagate back to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %v", err)
	}
	src, err := openSystemSources()
	defer src.close()
	if err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", stagingDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=16m,nr_inodes=4096,mode=0755"); err != nil {
		return fmt.Errorf("mounting the root tmpfs: %v", err)
	}
	if p.root, err = unix.Open(stagingDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
		return fmt.Errorf("opening the new root: %v", err)
	}
	steps := []struct {
		what string
		do   func() error
	}{
		{"/usr", func() error { return populateSystem(p.root, src) }},
		{"/etc", func() error { return populateEtc(p.root, src.etc) }},
		{"/dev", func() error { return populateDev(src.dev) }},
		{"/proc", populateProc},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return fmt.Errorf("building %s: %v", s.what, err)
		}
	}
	return nil
}

// discard unmounts a prepared root (and all beneath it), uncovering the
// host's stagingDir again.
func (p *preparedRoot) discard() {
	if p.root >= 0 {
		unix.Close(p.root)
		p.root = -1
		unix.Unmount(stagingDir, unix.MNT_DETACH)
	}
}

// readsStaging reports whether the configuration takes anything from the
// host beneath stagingDir, which a prepared root covers. The paths are real
// ones (binds are opened without following symlinks, Exe is resolved), so
// comparing them is exact.
func readsStaging(cfg *initConfig) bool {
	paths := []string{}
	for _, b := range cfg.Binds {
		paths = append(paths, b.Path)
	}
	if cfg.ExeBind {
		paths = append(paths, cfg.Exe)
	}
	for _, path := range paths {
		if within(path, stagingDir) {
			return true
		}
	}
	return false
}

// buildRoot completes the prepared root with what cfg adds and pivots into
// it; enterCgroup, called once all but the cgroup view is built, completes
// cfg with its cgroup. A configuration that reads beneath stagingDir gets its
// sources opened before the root is prepared again, as the covered paths
// require.
func buildRoot(cfg *initConfig, pre *preparedRoot, enterCgroup func() error) error {
	if pre.err == nil && readsStaging(cfg) {
		pre.discard()
		src, err := openConfigSources(cfg)
		defer src.close()
		if err != nil {
			return err
		}
		if pre = prepareRoot(); pre.err != nil {
			return pre.err
		}
		return finishRoot(cfg, pre.root, src, enterCgroup)
	}
	if pre.err != nil {
		return pre.err
	}
	src, err := openConfigSources(cfg)
	defer src.close()
	if err != nil {
		return err
	}
	return finishRoot(cfg, pre.root, src, enterCgroup)
}

// finishRoot adds the configuration's parts to the prepared root, makes it
// read-only and pivots into it.
func finishRoot(cfg *initConfig, root int, src *configSources, enterCgroup func() error) error {
	defer unix.Close(root)
	steps := []struct {
		what string
		do   func() error
	}{
		{"/etc", func() error { return writeEtcConfig(cfg) }},
		{"/dev/shm, /tmp and HOME", func() error { return mountScratch(cfg) }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return fmt.Errorf("building %s: %v", s.what, err)
		}
	}
	for i, b := range cfg.Binds {
		if err := attachBind(root, b.Path, src.binds[i]); err != nil {
			return fmt.Errorf("mount %s %s: %v", b.flag(), b.Path, err)
		}
	}
	if src.exe != nil {
		if err := attachBind(root, cfg.Exe, *src.exe); err != nil {
			return fmt.Errorf("making the server executable %s visible: %v", cfg.Exe, err)
		}
	}
	if err := enterCgroup(); err != nil {
		return err
	}
	if err := showCgroup(cfg.CgroupView); err != nil {
		return fmt.Errorf("building /sys: %v", err)
	}
	if err := unix.MountSetattr(root, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("making the root read-only: %v", err)
	}
	return pivotInto(root, cfg)
}

// openSystemSources copies the host system paths every sandbox shows.
func openSystemSources() (*systemSources, error) {
	s := &systemSources{topLinks: map[string]string{}, topDirs: map[string]hostTree{}, dev: map[string]hostTree{}}
	var err error
	if s.usr, err = systemTree("/usr", attrRO); err != nil {
		return s, fmt.Errorf("/usr: %v", err)
	}
	for _, name := range mergedUsrLinks {
		p := "/" + name
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil:
			return s, err
		case fi.Mode()&os.ModeSymlink != 0:
			if s.topLinks[name], err = os.Readlink(p); err != nil {
				return s, err
			}
		case fi.IsDir():
			if s.topDirs[name], err = systemTree(p, attrRO); err != nil {
				return s, fmt.Errorf("%s: %v", p, err)
			}
		}
	}
	if s.etc, err = readEtc(); err != nil {
		return s, err
	}
	for _, name := range devNodes {
		if s.dev[name], err = systemTree("/dev/"+name, attrDev); err != nil {
			return s, fmt.Errorf("/dev/%s: %v", name, err)
		}
	}
	return s, nil
}

// openConfigSources copies the user's binds, the server executable and the
// server's cgroup from the host.
func openConfigSources(cfg *initConfig) (*configSources, error) {
	s := &configSources{}
	var err error
	owners := idMapNamespaces{serverUID: cfg.UID, serverGID: cfg.GID}
	defer owners.close() // the mounts keep what they need
	for _, b := range cfg.Binds {
		attrs := uint64(attrRO)
		if b.Writable {
			attrs = attrRW
		}
		userns := -1
		if b.IDMap != nil {
			if userns, err = owners.get(*b.IDMap); err != nil {
				return s, fmt.Errorf("mount %s %s: mapping its owner %d to the server: %v", b.flag(), b.Path, b.IDMap.UID, err)
			}
		}
		t, err := userTree(b.Path, attrs, userns)
		if err != nil {
			return s, bindError(b, err)
		}
		s.binds = append(s.binds, t)
	}
	if cfg.ExeBind {
		t, err := userTree(cfg.Exe, attrRO, -1)
		if err != nil {
			return s, fmt.Errorf("server executable %s: %v", cfg.Exe, err)
		}
		s.exe = &t
	}
	return s, nil
}

// systemTree copies a host system path; symlinks are the administrator's,
// so they are followed.
func systemTree(path string, attrs uint64) (hostTree, error) {
	fd, err := cloneTree(unix.AT_FDCWD, path)
	if err != nil {
		return hostTree{}, err
	}
	return finishTree(fd, attrs)
}

// userTree copies a path the user granted. No symlink is followed: one
// planted by a server in a granted directory must not redirect this mount.
// With userns >= 0 the copy is idmapped by it (see idmap_mount.go).
func userTree(path string, attrs uint64, userns int) (hostTree, error) {
	fd, err := openNoSymlinks(unix.AT_FDCWD, path, 0)
	if err != nil {
		return hostTree{}, err
	}
	defer unix.Close(fd)
	tree, err := cloneTree(fd, "")
	if err != nil {
		return hostTree{}, err
	}
	if userns >= 0 {
		if err := setTreeIDMap(tree, userns); err != nil {
			unix.Close(tree)
			return hostTree{}, fmt.Errorf("idmapped mount: %w", err)
		}
	}
	return finishTree(tree, attrs)
}

func finishTree(fd int, attrs uint64) (hostTree, error) {
	if err := setTreeAttrs(fd, attrs); err != nil {
		unix.Close(fd)
		return hostTree{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return hostTree{}, err
	}
	return hostTree{fd: fd, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}, nil
}

// bindError turns a failed --ro/--rw source into advice.
func bindError(b bind, err error) error {
	switch {
	case errors.Is(err, unix.ENOENT):
		return fmt.Errorf("mount %s %s: no such file or directory: create it or drop %s", b.flag(), b.Path, b.flag())
	case errors.Is(err, unix.ELOOP):
		hint := "pass the path without symlinks"
		if real, rerr := filepath.EvalSymlinks(b.Path); rerr == nil {
			hint = "pass the real path " + real
		}
		return fmt.Errorf("mount %s %s: the path goes through a symlink, which the sandbox never follows: %s", b.flag(), b.Path, hint)
	case errors.Is(err, unix.EACCES):
		return fmt.Errorf("mount %s %s: permission denied to the supervisor", b.flag(), b.Path)
	}
	return fmt.Errorf("mount %s %s: %v", b.flag(), b.Path, err)
}

// attachBind mounts a copied tree at the same path inside the new root.
func attachBind(root int, path string, t hostTree) error {
	target, err := mountPointBeneath(root, path, t.dir)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return fmt.Errorf("the mount point goes through a symlink inside the sandbox")
		}
		return fmt.Errorf("creating the mount point: %v", err)
	}
	defer unix.Close(target)
	return attachTree(t.fd, target)
}

// populateSystem shows /usr and the merged-/usr symlinks read-only.
func populateSystem(root int, src *systemSources) error {
	if err := attachBind(root, "/usr", src.usr); err != nil {
		return err
	}
	for name, target := range src.topLinks {
		if err := unix.Symlinkat(target, root, name); err != nil {
			return err
		}
	}
	for name, t := range src.topDirs {
		if err := attachBind(root, "/"+name, t); err != nil {
			return err
		}
	}
	return nil
}

// populateDev builds a minimal, read-only /dev: five devices, stdio links,
// and the mount point of shm (see mountScratch).
func populateDev(nodes map[string]hostTree) error {
	dev := stagingDir + "/dev"
	if err := os.Mkdir(dev, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "size=64k,nr_inodes=64,mode=0755"); err != nil {
		return err
	}
	devfd, err := unix.Open(dev, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(devfd)
	for _, name := range devNodes {
		if err := attachBind(devfd, "/"+name, nodes[name]); err != nil {
			return fmt.Errorf("/dev/%s: %v", name, err)
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, dev+"/"+name); err != nil {
			return err
		}
	}
	shm := dev + "/shm"
	if err := os.Mkdir(shm, 0o755); err != nil {
		return err
	}
	return unix.MountSetattr(devfd, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
}

// mountScratch mounts the size-limited /dev/shm and /tmp and the empty HOME.
func mountScratch(cfg *initConfig) error {
	if err := unix.Mount("tmpfs", stagingDir+"/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, fmt.Sprintf("size=%d,mode=1777", cfg.TmpSize)); err != nil {
		return fmt.Errorf("/dev/shm: %v", err)
	}
	tmp := stagingDir + "/tmp"
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", tmp, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%d,mode=1777", cfg.TmpSize)); err != nil {
		return fmt.Errorf("/tmp: %v", err)
	}
	home := stagingDir + sandboxHome
	if err := os.Mkdir(home, 0o755); err != nil {
		return err
	}
	opts := fmt.Sprintf("size=%d,mode=0700,uid=%d,gid=%d", cfg.TmpSize, cfg.UID, cfg.GID)
	if err := unix.Mount("tmpfs", home, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("%s: %v", sandboxHome, err)
	}
	return nil
}

// pivotInto makes root the root of this mount namespace and detaches the
// host's, so nothing of it stays reachable.
func pivotInto(root int, cfg *initConfig) error {
	if err := unix.Fchdir(root); err != nil {
		return err
	}
	// pivot_root(".", ".") stacks the old root on the new one; detaching it
	// leaves only the new root (the runc idiom; needs no put_old directory).
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %v", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the host root: %v", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	if fi, err := os.Stat(cfg.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("working directory %s does not exist inside the sandbox: grant it with --ro or --rw", cfg.Dir)
	}
	return nil
}
