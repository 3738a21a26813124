package sandbox

// PLACEHOLDER owned by the seccomp work: replaced by seccomp*.go.

import "errors"

// compileSeccomp builds, in the supervisor, the BPF program for profile
// ("default" or a Docker/OCI JSON file). The result is the raw sock_filter
// array (8 bytes per instruction), native arch only. netHost allows
// AF_INET/AF_INET6 sockets; logDenials turns denials into SCMP_ACT_LOG.
func compileSeccomp(profile string, netHost, logDenials bool) ([]byte, error) {
	return nil, errors.New("seccomp: not built yet")
}

// loadSeccomp installs prog in the calling process for all threads. It needs
// no cgo; PR_SET_NO_NEW_PRIVS must be set first.
func loadSeccomp(prog []byte) error { return errors.New("seccomp: not built yet") }
