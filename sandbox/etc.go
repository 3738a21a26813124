package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The /etc a sandbox gets: a few host files programs need (copied, so their
// host symlinks into /run etc. do not matter), a few read-only directories,
// and a synthesized passwd and group naming the sandbox user. Nothing else.
var (
	etcCopied  = []string{"ld.so.cache", "ld.so.conf", "nsswitch.conf", "host.conf", "gai.conf", "timezone"}
	etcLinked  = []string{"localtime", "os-release"} // symlinks are kept as symlinks
	etcDirs    = []string{"ssl", "pki", "ca-certificates", "alternatives", "ld.so.conf.d"}
	etcNetHost = []string{"resolv.conf", "hosts"} // only with --net host
)

type etcFiles struct {
	files    map[string][]byte
	links    map[string]string
	dirNames []string
	dirs     []hostTree
}

// readEtc takes the host's part of /etc that every sandbox gets.
func readEtc() (etcFiles, error) {
	e := etcFiles{files: map[string][]byte{}, links: map[string]string{}}
	for _, name := range etcCopied {
		data, err := os.ReadFile("/etc/" + name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return e, fmt.Errorf("/etc/%s: %v", name, err)
		}
		e.files[name] = data
	}
	for _, name := range etcLinked {
		p := "/etc/" + name
		if target, err := os.Readlink(p); err == nil {
			e.links[name] = target
		} else if data, err := os.ReadFile(p); err == nil {
			e.files[name] = data
		}
	}
	for _, name := range etcDirs {
		fi, err := os.Stat("/etc/" + name)
		if err != nil || !fi.IsDir() {
			continue
		}
		t, err := systemTree("/etc/"+name, attrRO)
		if err != nil {
			return e, fmt.Errorf("/etc/%s: %v", name, err)
		}
		e.dirNames = append(e.dirNames, name)
		e.dirs = append(e.dirs, t)
	}
	e.files["hostname"] = []byte(sandboxHostname + "\n")
	return e, nil
}

// etcConfigFiles are the /etc files that depend on the configuration: the
// network's (the host's with --net host) and the sandbox user's.
func etcConfigFiles(cfg *initConfig) (map[string][]byte, error) {
	files := map[string][]byte{"passwd": []byte(passwdFile(cfg)), "group": []byte(groupFile(cfg))}
	if !cfg.NetHost {
		files["hosts"] = []byte("127.0.0.1\tlocalhost " + sandboxHostname + "\n::1\tlocalhost ip6-localhost ip6-loopback\n")
		return files, nil
	}
	for _, name := range etcNetHost {
		data, err := os.ReadFile("/etc/" + name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("/etc/%s: %v", name, err)
		}
		files[name] = data
	}
	return files, nil
}

// writeEtcConfig adds etcConfigFiles to the staging root's /etc.
func writeEtcConfig(cfg *initConfig) error {
	files, err := etcConfigFiles(cfg)
	if err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(stagingDir, "etc", name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func passwdFile(cfg *initConfig) string {
	var b strings.Builder
	if cfg.UID != 0 {
		b.WriteString("root:x:0:0:root:/:/usr/sbin/nologin\n")
	}
	fmt.Fprintf(&b, "%s:x:%d:%d:mcpsandbox server:%s:/bin/sh\n", cfg.UserName, cfg.UID, cfg.GID, sandboxHome)
	if cfg.UID != 65534 {
		b.WriteString("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
	}
	return b.String()
}

func groupFile(cfg *initConfig) string {
	var b strings.Builder
	if cfg.GID != 0 {
		b.WriteString("root:x:0:\n")
	}
	fmt.Fprintf(&b, "%s:x:%d:\n", cfg.UserName, cfg.GID)
	if cfg.GID != 65534 {
		b.WriteString("nogroup:x:65534:\n")
	}
	return b.String()
}

// populateEtc writes the host's part of /etc into the staging root.
func populateEtc(root int, e etcFiles) error {
	etc := filepath.Join(stagingDir, "etc")
	if err := os.Mkdir(etc, 0o755); err != nil {
		return err
	}
	for name, data := range e.files {
		if err := os.WriteFile(filepath.Join(etc, name), data, 0o644); err != nil {
			return err
		}
	}
	for name, target := range e.links {
		if err := os.Symlink(target, filepath.Join(etc, name)); err != nil {
			return err
		}
	}
	for i, name := range e.dirNames {
		if err := attachBind(root, "/etc/"+name, e.dirs[i]); err != nil {
			return fmt.Errorf("/etc/%s: %v", name, err)
		}
	}
	return nil
}
