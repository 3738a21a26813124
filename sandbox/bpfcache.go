package sandbox

import (
	"fmt"
	"os"
	"sync"
)

// The BPF program depends only on the policy, so it is compiled once per
// profile (a file profile again when the file changes); the built-in profile
// normally comes pre-compiled (seccomp_embedded.go).
var seccompCache struct {
	sync.Mutex
	progs map[string][]byte
}

func cachedSeccomp(profile string, netHost, logDenials bool) ([]byte, error) {
	if profile == "default" {
		if prog := embeddedSeccomp(netHost, logDenials); prog != nil {
			return prog, nil
		}
	}
	key := fmt.Sprintf("%s\x00%t\x00%t", profile, netHost, logDenials)
	if profile != "default" {
		fi, err := os.Stat(profile)
		if err != nil {
			return nil, fmt.Errorf("--seccomp %s: %w", profile, err)
		}
		key += fmt.Sprintf("\x00%d\x00%d", fi.Size(), fi.ModTime().UnixNano())
	}
	seccompCache.Lock()
	defer seccompCache.Unlock()
	if prog, ok := seccompCache.progs[key]; ok {
		return prog, nil
	}
	prog, err := compileSeccomp(profile, netHost, logDenials)
	if err != nil {
		return nil, err
	}
	if seccompCache.progs == nil {
		seccompCache.progs = map[string][]byte{}
	}
	seccompCache.progs[key] = prog
	return prog, nil
}
