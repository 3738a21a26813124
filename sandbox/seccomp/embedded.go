package seccomp

import (
	"io/fs"
	"path"
	"strings"
)

//go:generate go test -run TestEmbeddedSeccompIsCurrent -args -update-seccomp

// The built-in profile's BPF depends only on (families, logDenials), the
// architecture and libseccomp's code generator, so it is compiled at build
// time into embedded/<arch>/*.bpf for the family sets the sandbox's network
// modes use: a start needs no libseccomp work. Another set is compiled. The
// programs are used only with the libseccomp version that generated them
// (embedded/<arch>/libseccomp-version), so they are byte for byte what
// Compile would produce here; TestEmbeddedSeccompIsCurrent checks that.

// variant names one variant of the built-in profile.
type variant struct {
	families   Families
	logDenials bool
}

// embeddedVersionFile records the libseccomp that compiled the programs.
const embeddedVersionFile = "libseccomp-version"

// file is the name of the variant's program in embeddedDir.
func (v variant) file() string {
	name := strings.Join(v.families.names(), "-")
	if v.families == 0 {
		name = "none"
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
// architecture, the linked libseccomp or the family set has none.
func embedded(v variant) []byte {
	lib := embeddedLibVersion()
	if lib == "" || lib != libVersion() {
		return nil
	}
	prog, err := fs.ReadFile(embeddedFiles, path.Join(embeddedDir, v.file()))
	if err != nil {
		return nil
	}
	return prog
}
