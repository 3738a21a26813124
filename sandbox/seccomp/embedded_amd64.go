package seccomp

import "embed"

// embeddedFiles holds the built-in profile pre-compiled for amd64, written
// by `go generate` (see embedded.go).
//
//go:embed embedded/amd64
var embeddedFiles embed.FS

const embeddedDir = "embedded/amd64"
