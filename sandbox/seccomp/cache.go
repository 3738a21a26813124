package seccomp

import (
	"fmt"
	"os"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// The BPF program depends only on the policy, so it is compiled once per
// profile (a file profile again when the file changes); the built-in profile
// normally comes pre-compiled (embedded.go).
var cache struct {
	sync.Mutex
	progs map[string][]byte
}

// Program is Compile's result for a start: the built-in profile from the
// embedded programs when they fit the linked libseccomp, anything else
// compiled once and kept (a set of families without an embedded program
// too). The caller must not modify the returned bytes.
func Program(profile string, families Families, logDenials bool) ([]byte, error) {
	if err := families.check(); err != nil {
		return nil, err
	}
	if profile == "default" {
		if prog := embedded(variant{families, logDenials}); prog != nil {
			return prog, nil
		}
	}
	key := fmt.Sprintf("%s\x00%d\x00%t", profile, families, logDenials)
	if profile != "default" {
		fi, err := os.Stat(profile)
		if err != nil {
			return nil, &field.Error{Field: "Seccomp", Value: profile, Err: err}
		}
		key += fmt.Sprintf("\x00%d\x00%d", fi.Size(), fi.ModTime().UnixNano())
	}
	cache.Lock()
	defer cache.Unlock()
	if prog, ok := cache.progs[key]; ok {
		return prog, nil
	}
	prog, err := Compile(profile, families, logDenials)
	if err != nil {
		return nil, err
	}
	if cache.progs == nil {
		cache.progs = map[string][]byte{}
	}
	cache.progs[key] = prog
	return prog, nil
}
