//go:build !amd64

package seccomp

// legacyModeSyscalls: none on this architecture (see the amd64 file).
var legacyModeSyscalls = map[string]uintptr{}
