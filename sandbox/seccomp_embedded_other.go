//go:build !amd64

package sandbox

// No pre-compiled built-in profile for this architecture: it is compiled
// once per process instead (see seccomp_embedded.go).
const embeddedSeccompLibVersion = ""

var embeddedSeccompProgs map[embeddedSeccompKey]string
