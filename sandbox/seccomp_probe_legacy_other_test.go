//go:build !amd64

package sandbox

// legacyModeSyscalls: none on this architecture (see the amd64 file).
var legacyModeSyscalls = map[string]uintptr{}
