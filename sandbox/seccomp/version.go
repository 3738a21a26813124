package seccomp

import (
	"fmt"

	libseccomp "github.com/seccomp/libseccomp-golang"
)

// LibVersion is the version of the libseccomp linked in, as
// "major.minor.micro" (for `mcpsandbox version`); ok is false when the
// library reports none.
func LibVersion() (version string, ok bool) {
	major, minor, micro := libseccomp.GetLibraryVersion()
	return fmt.Sprintf("%d.%d.%d", major, minor, micro), major > 0
}

// libVersion is LibVersion for messages, which name whatever it reports.
func libVersion() string {
	v, _ := LibVersion()
	return v
}
