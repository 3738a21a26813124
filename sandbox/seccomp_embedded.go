package sandbox

//go:generate go test -run TestEmbeddedSeccompIsCurrent -args -update-seccomp

// The built-in profile's BPF depends only on (netHost, logDenials), the
// architecture and libseccomp's code generator, so it is compiled at build
// time into seccomp_default_<arch>.go: a start needs no libseccomp work.
// The embedded programs are used only with the libseccomp version that
// generated them, so they are byte for byte what compileSeccomp would
// produce here; TestEmbeddedSeccompIsCurrent checks that.

// embeddedSeccompKey names one variant of the built-in profile.
type embeddedSeccompKey struct{ netHost, logDenials bool }

// embeddedSeccomp returns the pre-compiled built-in profile, or nil when
// this architecture or the linked libseccomp has none.
func embeddedSeccomp(netHost, logDenials bool) []byte {
	if len(embeddedSeccompProgs) == 0 || libseccompVersion() != embeddedSeccompLibVersion {
		return nil
	}
	return []byte(embeddedSeccompProgs[embeddedSeccompKey{netHost, logDenials}])
}
