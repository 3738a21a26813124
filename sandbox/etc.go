package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// The /etc a sandbox gets: a few host files programs need (initstage's
// init_root.c copies them), a few read-only directories, and the files
// below, which depend on the configuration: a synthesized passwd and group
// naming the sandbox user, and the network's (its mode's etc function,
// network.go).
var etcNetHost = []string{"resolv.conf", "hosts"} // the host's, only with NetHost

// etcConfigFiles are the /etc files that depend on the configuration: the
// network's and the sandbox user's.
func etcConfigFiles(cfg *initConfig) (map[string][]byte, error) {
	files := map[string][]byte{"passwd": []byte(passwdFile(cfg)), "group": []byte(groupFile(cfg))}
	m, ok := cfg.Net.mode()
	if !ok {
		return nil, fmt.Errorf("network %s has no /etc files", cfg.Net)
	}
	etc := m.etc
	if cfg.resolver {
		etc = resolverEtc
	}
	if err := etc(files); err != nil {
		return nil, err
	}
	return files, nil
}

// loopbackEtc names only lo's addresses: a namespace of the server's own
// has nothing else, and no resolv.conf, so names fail at once.
func loopbackEtc(files map[string][]byte) error {
	files["hosts"] = []byte("127.0.0.1\tlocalhost " + sandboxHostname + "\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	return nil
}

// egressEtc names the supervisor's DNS stub, which listens on the
// namespace's own loopback (capture.go), and lo's addresses.
func egressEtc(files map[string][]byte) error {
	files["resolv.conf"] = []byte("nameserver 127.0.0.1\n")
	return loopbackEtc(files)
}

// resolverEtc names the supervisor's resolver of NetNone, which answers
// every name with NXDOMAIN (and notes it): glibc, Go and c-ares then fail
// at once with "not found", no retry, where without resolv.conf they ask
// 127.0.0.1 themselves, get no socket, and some report a temporary
// failure that a client retries.
func resolverEtc(files map[string][]byte) error {
	files["resolv.conf"] = []byte("nameserver 127.0.0.1\n")
	return loopbackEtc(files)
}

// hostEtc copies the host's resolv.conf and hosts, as far as they exist.
func hostEtc(files map[string][]byte) error {
	for _, name := range etcNetHost {
		data, err := os.ReadFile("/etc/" + name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("/etc/%s: %v", name, err)
		}
		files[name] = data
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
