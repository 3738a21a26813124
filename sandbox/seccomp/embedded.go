package seccomp

import (
	"io/fs"
	"path"
	"strings"
)

//go:generate go test -run TestEmbeddedSeccompIsCurrent -args -update-seccomp

// The built-in profile's BPF depends only on (netHost, logDenials), the
// architecture and libseccomp's code generator, so it is compiled at build
// time into embedded/<arch>/*.bpf: a start needs no libseccomp work. The
// programs are used only with the libseccomp version that generated them
// (embedded/<arch>/libseccomp-version), so they are byte for byte what
// Compile would produce here; TestEmbeddedSeccompIsCurrent checks that.

// variant names one variant of the built-in profile.
type variant struct{ netHost, logDenials bool }

// embeddedVersionFile records the libseccomp that compiled the programs.
const embeddedVersionFile = "libseccomp-version"

// file is the name of the variant's program in embeddedDir.
func (v variant) file() string {
	name := "net-none"
	if v.netHost {
		name = "net-host"
	}
	if v.logDenials {
		name += "-log"
	}
	return name + ".bpf"
}

// embeddedLibVersion is the libseccomp that compiled the embedded programs,
// "" when this architecture has none.
func embeddedLibVersion() string {
	if embeddedDir == "" {
		return ""
	}
	v, err := fs.ReadFile(embeddedFiles, path.Join(embeddedDir, embeddedVersionFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(v))
}

// embedded returns the pre-compiled built-in profile, or nil when this
// architecture or the linked libseccomp has none.
func embedded(netHost, logDenials bool) []byte {
	lib := embeddedLibVersion()
	if lib == "" || lib != libVersion() {
		return nil
	}
	prog, err := fs.ReadFile(embeddedFiles, path.Join(embeddedDir, variant{netHost, logDenials}.file()))
	if err != nil {
		return nil
	}
	return prog
}
