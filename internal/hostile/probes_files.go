//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// tryRead reads path: a file with content or a directory with entries got
// through; an empty one is only noted.
func tryRead(at *attempts, path string) {
	fi, err := os.Stat(path)
	if err != nil {
		at.note("read %s: %s", path, errText(err))
		return
	}
	if fi.IsDir() {
		ents, err := os.ReadDir(path)
		switch {
		case err != nil:
			at.note("list %s: %s", path, errText(err))
		case len(ents) > 0:
			at.got("listed %s (%d entries, e.g. %s)", path, len(ents), ents[0].Name())
		default:
			at.note("list %s: empty", path)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		at.note("read %s: %s", path, errText(err))
		return
	}
	defer f.Close()
	buf := make([]byte, 64)
	n, err := f.Read(buf)
	if n > 0 {
		at.got("read %d bytes of %s", n, path)
		return
	}
	if err == nil || err == io.EOF {
		at.note("read %s: empty", path)
		return
	}
	at.note("read %s: %s", path, errText(err))
}

func probeHostSecrets(a *Args, at *attempts) {
	paths := []string{"/etc/shadow", "/etc/gshadow", "/root", "/root/.ssh", "/home", "/etc/ssh"}
	if a.SecretFile != "" {
		paths = append([]string{a.SecretFile, filepath.Dir(a.SecretFile)}, paths...)
	}
	if a.SecretDir != "" {
		paths = append(paths, a.SecretDir)
	}
	for _, p := range paths {
		tryRead(at, p)
	}
	keys, _ := filepath.Glob("/etc/ssh/ssh_host_*_key")
	for _, k := range keys {
		tryRead(at, k)
	}
}

// tryCreate creates a new file in dir; on success it removes it again unless
// keep is set (the test checks for the file on the host).
func tryCreate(at *attempts, path string, keep bool) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		at.note("create %s: %s", path, errText(err))
		return
	}
	f.Write([]byte("written by the hostile test server\n"))
	f.Close()
	at.got("created %s", path)
	if !keep {
		os.Remove(path)
	}
}

func sameFilesystem(a, b string) bool {
	var sa, sb unix.Stat_t
	return unix.Stat(a, &sa) == nil && unix.Stat(b, &sb) == nil && sa.Dev == sb.Dev
}

// tryOpenWrite opens an existing file for writing and closes it unwritten.
func tryOpenWrite(at *attempts, path string) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		at.note("open %s for writing: %s", path, errText(err))
		return
	}
	f.Close()
	at.got("opened %s for writing", path)
}

func probeWriteOutside(a *Args, at *attempts) {
	// The canary's directory exists on the host only: creating it here
	// would only write to the sandbox's own /tmp.
	if a.WriteCanary != "" {
		tryCreate(at, a.WriteCanary, true)
	}
	if a.ReadOnlyDir != "" {
		tryCreate(at, filepath.Join(a.ReadOnlyDir, "hostile-canary"), false)
		tryOpenWrite(at, filepath.Join(a.ReadOnlyDir, "granted-ro.txt"))
	}
	// The binary's own directory counts only when it is the host's (same
	// filesystem as the binary); a sandbox may instead bind the file alone
	// into a directory of its own making. The file is kept for the test to
	// look for on the host.
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		if sameFilesystem(dir, exe) {
			tryCreate(at, filepath.Join(dir, "hostile-canary"), true)
		} else {
			at.note("%s belongs to the sandbox (the binary is bound alone)", dir)
		}
	}
	for _, dir := range []string{"/usr", "/usr/bin", "/usr/lib", "/etc"} {
		tryCreate(at, filepath.Join(dir, "hostile-canary"), false)
	}
	for _, f := range []string{"/etc/passwd", "/etc/ld.so.cache", "/etc/hosts", "/usr/bin/env"} {
		tryOpenWrite(at, f)
	}
}

// probeSymlinkInGrantedDir plants links to host paths in the --rw dir and
// reads through them. The links stay behind: the test starts a second server
// that binds one of them.
func probeSymlinkInGrantedDir(a *Args, at *attempts) {
	if a.ReadWriteDir == "" {
		at.got("no --rw dir given: nothing tried")
		return
	}
	plant := func(name, target string) string {
		link := filepath.Join(a.ReadWriteDir, name)
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			at.note("plant %s -> %s: %s", link, target, errText(err))
		}
		return link
	}
	if a.SecretFile != "" {
		tryRead(at, plant("link-secret-file", a.SecretFile))
		if rel, err := filepath.Rel(a.ReadWriteDir, a.SecretFile); err == nil {
			tryRead(at, plant("link-secret-relative", rel))
		}
	}
	if a.SecretDir != "" {
		dir := plant("link-secret-dir", a.SecretDir)
		tryRead(at, dir)
		if a.SecretFile != "" {
			tryRead(at, filepath.Join(dir, filepath.Base(a.SecretFile)))
		}
	}
	root := plant("link-root", "/")
	tryRead(at, filepath.Join(root, "etc", "shadow"))
	if a.SecretFile != "" {
		tryRead(at, filepath.Join(root, a.SecretFile))
	}
	// A hard link to a file outside the grant would survive the sandbox.
	if a.SecretFile != "" {
		hl := filepath.Join(a.ReadWriteDir, "hardlink-secret")
		if err := os.Link(a.SecretFile, hl); err == nil {
			at.got("hard-linked %s into the granted dir", a.SecretFile)
		} else {
			at.note("hard link %s: %s", a.SecretFile, errText(err))
		}
	}
}

// probeProcRootTraversal walks through other processes' root, cwd and open
// directories, the way CVE-2019-5736-style and fd-leak escapes do.
func probeProcRootTraversal(a *Args, at *attempts) {
	pids := []int{1}
	if a.SupervisorPid > 0 {
		pids = append(pids, a.SupervisorPid)
	}
	if a.HostPid > 0 {
		pids = append(pids, a.HostPid)
	}
	for _, pid := range pids {
		base := "/proc/" + strconv.Itoa(pid)
		if a.SecretFile != "" {
			tryRead(at, base+"/root"+a.SecretFile)
			tryRead(at, base+"/cwd/"+filepath.Base(a.SecretFile))
		}
		tryRead(at, base+"/root/etc/shadow")
		tryRead(at, base+"/root/root")
		fds, err := os.ReadDir(base + "/fd")
		if err != nil {
			at.note("list %s/fd: %s", base, errText(err))
			continue
		}
		for _, fd := range fds {
			p := base + "/fd/" + fd.Name()
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				at.got("%s is a directory (%s) reachable from inside", p, readlink(p))
			}
		}
	}
}

func readlink(p string) string {
	s, err := os.Readlink(p)
	if err != nil {
		return errText(err)
	}
	return s
}

func probeHostServiceSockets(a *Args, at *attempts) {
	for _, p := range []string{
		"/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock",
		"/run/dbus/system_bus_socket", "/run/systemd/private", "/run/user",
		"/tmp/.X11-unix", "/run/podman/podman.sock", "/var/run/libvirt",
	} {
		if _, err := os.Lstat(p); err == nil {
			at.got("%s exists", p)
		} else {
			at.note("%s: %s", p, errText(err))
		}
	}
	for _, d := range []string{"/run", "/var"} {
		if _, err := os.Stat(d); err == nil {
			at.note("%s exists", d)
		}
	}
}

// scratchDir makes a scratch directory for probes in the server's own /tmp.
func scratchDir(name string) (string, error) {
	dir := filepath.Join(os.TempDir(), "hostile-"+name)
	if err := os.MkdirAll(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("mkdir %s: %w", dir, err)
	}
	return dir, nil
}
