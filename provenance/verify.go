package provenance

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// Package names the version whose provenance is verified, as the registry's
// packument says.
type Package struct {
	Name      string // "@scope/name" or "name"
	Version   string // exact: "1.2.0"
	Integrity string // the tarball's SRI: "sha512-…"
}

// Check names the part of a verification that failed.
type Check string

const (
	CheckBundle        Check = "bundle"            // not a Sigstore bundle this verifier reads
	CheckTrustedRoot   Check = "trusted root"      // no trusted material to verify against
	CheckSignature     Check = "signature"         // the envelope's signature
	CheckCertificate   Check = "certificate chain" // the signing certificate against the root's Fulcio CAs
	CheckCT            Check = "certificate transparency"
	CheckTlog          Check = "transparency log"      // the Rekor entry, its promise or inclusion proof
	CheckTimestamp     Check = "timestamp"             // a verified time for the signature
	CheckPredicateType Check = "predicate type"        // not a SLSA provenance statement
	CheckSubject       Check = "subject"               // another package name or version
	CheckDigest        Check = "digest"                // another tarball
	CheckIdentity      Check = "identity"              // no CI identity in the certificate
	CheckSigstore      Check = "Sigstore verification" // another of sigstore-go's steps
)

// Error is a refused provenance: which check failed, and why.
type Error struct {
	Package string // name@version
	Check   Check
	Err     error
}

func (e *Error) Error() string {
	return fmt.Sprintf("provenance of %s: %s check failed: %v", e.Package, e.Check, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// SLSA provenance predicate types npm publishes (v1 since npm 9.8, v0.2 before).
const (
	SLSAProvenanceV1  = "https://slsa.dev/provenance/v1"
	SLSAProvenanceV02 = "https://slsa.dev/provenance/v0.2"
)

// Verify checks a Sigstore bundle from the registry's attestations for pkg
// against trust: the signature, the certificate chain to a Fulcio CA, a
// transparency log entry and the time it gives, SCTs when the root lists CT
// logs; then that the signed statement is SLSA provenance whose subject is
// exactly this package version and tarball. It returns who built it.
func Verify(bundleJSON []byte, pkg Package, trust *Root) (Identity, error) {
	fail := func(c Check, err error) (Identity, error) {
		return Identity{}, &Error{Package: pkg.Name + "@" + pkg.Version, Check: c, Err: err}
	}
	if trust == nil || trust.material == nil {
		return fail(CheckTrustedRoot, errors.New("no Sigstore trusted root was given: provenance cannot be verified without one"))
	}
	digest, err := sha512Hex(pkg.Integrity)
	if err != nil {
		return fail(CheckDigest, err)
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(bundleJSON); err != nil {
		return fail(CheckBundle, err)
	}
	if b.GetDsseEnvelope() == nil {
		return fail(CheckBundle, errors.New("the bundle holds no DSSE envelope: it is no attestation"))
	}
	opts := []verify.VerifierOption{verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1)}
	if len(trust.material.CTLogs()) > 0 {
		opts = append(opts, verify.WithSignedCertificateTimestamps(1))
	}
	v, err := verify.NewVerifier(trust.material, opts...)
	if err != nil {
		return fail(CheckTrustedRoot, err)
	}
	// The identity is not known in advance (a first prepare trusts it and
	// the lock pins it, SameIdentity compares later ones), and the subject
	// is compared below by name and digest, so sigstore-go is asked for the
	// cryptography only.
	res, err := v.Verify(&b, verify.NewPolicy(verify.WithoutArtifactUnsafe(), verify.WithoutIdentitiesUnsafe()))
	if err != nil {
		return fail(classify(err), explain(err))
	}
	st := res.Statement
	if st == nil {
		return fail(CheckBundle, errors.New("the envelope holds no in-toto statement"))
	}
	if t := st.GetPredicateType(); t != SLSAProvenanceV1 && t != SLSAProvenanceV02 {
		return fail(CheckPredicateType, fmt.Errorf("the statement's predicate is %q, not SLSA provenance (%s)", t, SLSAProvenanceV1))
	}
	want := Purl(pkg.Name, pkg.Version)
	subjects := st.GetSubject()
	if len(subjects) != 1 || subjects[0].GetName() != want {
		names := make([]string, len(subjects))
		for i, s := range subjects {
			names[i] = s.GetName()
		}
		return fail(CheckSubject, fmt.Errorf("the statement is about %s, not %s", orNone(strings.Join(names, ", ")), want))
	}
	if got := subjects[0].GetDigest()["sha512"]; got != digest {
		return fail(CheckDigest, fmt.Errorf("the statement's tarball digest is sha512:%s, the tarball's is sha512:%s: it attests another tarball", orNone(got), digest))
	}
	if res.Signature == nil || res.Signature.Certificate == nil {
		return fail(CheckIdentity, errors.New("the bundle was signed with a key, not a Fulcio certificate: it names no build identity"))
	}
	id, err := identityOf(*res.Signature.Certificate)
	if err != nil {
		return fail(CheckIdentity, err)
	}
	return id, nil
}

// Purl is the package URL npm attests a version as: pkg:npm/%40scope/name@1.0.0.
func Purl(name, version string) string {
	return "pkg:npm/" + strings.Replace(name, "@", "%40", 1) + "@" + version
}

// sha512Hex is the sha512 digest of an SRI integrity string, in hex.
func sha512Hex(integrity string) (string, error) {
	for _, f := range strings.Fields(integrity) {
		if b64, ok := strings.CutPrefix(f, "sha512-"); ok {
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil || len(raw) != 64 {
				return "", fmt.Errorf("integrity %q is no sha512 SRI digest", integrity)
			}
			return hex.EncodeToString(raw), nil
		}
	}
	return "", fmt.Errorf("integrity %q has no sha512 digest, which npm attests", integrity)
}

// explain adds what a sigstore-go message means for a user, where its own
// words say how but not why.
func explain(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "not enough verified log entries"):
		return fmt.Errorf("%w (no log entry verifies against the trusted root: it is another Sigstore instance's, or the entry's signed timestamp is forged)", err)
	case strings.Contains(msg, "leaf certificate verification failed"):
		return fmt.Errorf("%w (the signing certificate does not chain to a Fulcio CA of the trusted root at the time it was logged)", err)
	case strings.Contains(msg, "does not match envelope payload hash"):
		return fmt.Errorf("%w (the envelope was changed after it was signed and logged)", err)
	}
	return err
}

// classify names the check a sigstore-go verification error comes from, by
// the step its message names (sigstore-go returns no typed errors for them).
func classify(err error) Check {
	msg := err.Error()
	for _, c := range []struct {
		prefix string
		check  Check
	}{
		{"failed to verify log inclusion", CheckTlog},
		{"failed to verify timestamps", CheckTimestamp},
		{"failed to verify signed certificate timestamp", CheckCT},
		{"failed to verify leaf certificate", CheckCertificate},
		{"failed to summarize certificate", CheckCertificate},
		{"failed to verify signature", CheckSignature},
	} {
		if strings.HasPrefix(msg, c.prefix) {
			return c.check
		}
	}
	return CheckSigstore
}
