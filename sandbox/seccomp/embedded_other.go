//go:build !amd64

package seccomp

import "embed"

// No pre-compiled built-in profile for this architecture: it is compiled
// once per process instead (see embedded.go).
var embeddedFiles embed.FS

const embeddedDir = ""
