// Package provenancetest makes Sigstore provenance bundles as the npm
// registry serves them, signed by a Sigstore instance of the test's own
// (sigstore-go's test CA and log), so that a loopback registry can serve
// them and tests can verify them end to end with provenance.Verify.
package provenancetest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore/pkg/signature"
	sigdsse "github.com/sigstore/sigstore/pkg/signature/dsse"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/mcpsandbox/mcpsandbox/provenance"
)

// GitHubActions is the OIDC issuer of GitHub Actions' tokens.
const GitHubActions = "https://token.actions.githubusercontent.com"

// Good is an identity to publish from: a GitHub Actions release workflow.
var Good = provenance.Identity{
	Issuer:     GitHubActions,
	Repository: "https://github.com/good/server",
	Workflow:   ".github/workflows/release.yml",
	Commit:     "1111111111111111111111111111111111111111",
	Ref:        "refs/tags/v1.0.0",
}

// Authority is a Sigstore instance of the test's own: a Fulcio-like CA, a
// Rekor-like log and a timestamp authority.
type Authority struct {
	t        testing.TB
	log      *ca.VirtualSigstore // the Rekor-like log and the TSA
	fulcio   *root.FulcioCertificateAuthority
	issuer   *ecdsa.PrivateKey // the Fulcio intermediate's key
	rootJSON []byte
}

// New makes an Authority; every failure fails t.
func New(t testing.TB) *Authority {
	t.Helper()
	log, err := ca.NewVirtualSigstore()
	check(t, err)
	rootCert, rootKey, err := ca.GenerateRootCa()
	check(t, err)
	inter, interKey, err := ca.GenerateFulcioIntermediate(rootCert, rootKey)
	check(t, err)
	a := &Authority{t: t, log: log, issuer: interKey, fulcio: &root.FulcioCertificateAuthority{
		Root: rootCert, Intermediates: []*x509.Certificate{inter},
		ValidityPeriodStart: time.Now().Add(-time.Hour), ValidityPeriodEnd: time.Now().Add(time.Hour),
		URI: "https://fulcio.test",
	}}
	a.rootJSON = trustedRoot(t, a.fulcio, log)
	return a
}

// trustedRoot is the trusted_root.json of a Fulcio CA and a log.
func trustedRoot(t testing.TB, fulcio *root.FulcioCertificateAuthority, log *ca.VirtualSigstore) []byte {
	// The test log's entries in RekorLogs carry their hex id as bytes; a
	// trusted_root.json carries raw key ids, so they are rewritten.
	logs := map[string]*root.TransparencyLog{}
	for id, l := range log.RekorLogs() {
		raw, err := hex.DecodeString(id)
		check(t, err)
		c := *l
		c.ID = raw
		logs[id] = &c
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, []root.CertificateAuthority{fulcio}, nil, log.TimestampingAuthorities(), logs)
	check(t, err)
	data, err := tr.MarshalJSON()
	check(t, err)
	return data
}

// RootWithFulcioOf is a's trusted root with other's Fulcio CA in place of
// a's: a's log entries verify against it, a's certificates do not.
func (a *Authority) RootWithFulcioOf(other *Authority) *provenance.Root {
	r, err := provenance.ParseRoot(trustedRoot(a.t, other.fulcio, a.log), "provenancetest (another Fulcio)")
	check(a.t, err)
	return r
}

// TrustedRootJSON is the Authority's trusted_root.json, as MCPSANDBOX_SIGSTORE_ROOT names one.
func (a *Authority) TrustedRootJSON() []byte { return a.rootJSON }

// Root is the Authority's trusted root, parsed.
func (a *Authority) Root() *provenance.Root {
	r, err := provenance.ParseRoot(a.rootJSON, "provenancetest")
	check(a.t, err)
	return r
}

// Integrity is a tarball's SRI integrity, as dist.integrity holds it.
func Integrity(tarball []byte) string {
	sum := sha512.Sum512(tarball)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// MakeBundle is a Sigstore bundle (protobuf JSON, media type v0.3) of SLSA
// provenance v1 for name@version whose subject is the tarball's sha512,
// signed by a certificate issued to id (a zero Issuer is GitHubActions).
func (a *Authority) MakeBundle(name, version string, tarball []byte, id provenance.Identity) []byte {
	a.t.Helper()
	sum := sha512.Sum512(tarball)
	statement, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": provenance.Purl(name, version), "digest": map[string]string{"sha512": hex.EncodeToString(sum[:])}}},
		"predicateType": provenance.SLSAProvenanceV1,
		"predicate": map[string]any{
			"buildDefinition": map[string]any{
				"buildType":          "https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1",
				"externalParameters": map[string]any{"workflow": map[string]any{"repository": id.Repository, "path": id.Workflow, "ref": id.Ref}},
			},
			"runDetails": map[string]any{"builder": map[string]any{"id": "https://github.com/actions/runner/github-hosted"}},
		},
	})
	check(a.t, err)
	return a.SignStatement(statement, id)
}

// SignStatement signs any in-toto statement as MakeBundle does, for tests
// that need a statement MakeBundle does not make (another predicate type).
func (a *Authority) SignStatement(statement []byte, id provenance.Identity) []byte {
	a.t.Helper()
	if id.Issuer == "" {
		id.Issuer = GitHubActions
	}
	now := time.Now()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(a.t, err)
	leaf := a.leaf(id, key, now)
	signer, err := signature.LoadECDSASignerVerifier(key, crypto.SHA256)
	check(a.t, err)
	es, err := dsse.NewEnvelopeSigner(&sigdsse.SignerAdapter{SignatureSigner: signer, Pub: &key.PublicKey})
	check(a.t, err)
	env, err := es.SignPayload(context.Background(), "application/vnd.in-toto+json", statement)
	check(a.t, err)
	sig, err := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	check(a.t, err)
	entry := a.logEntry(leaf, env, sig, now)
	b := &protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:     &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: leaf.Raw}},
			TlogEntries: []*protorekor.TransparencyLogEntry{entry},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload:     statement,
			PayloadType: env.PayloadType,
			Signatures:  []*protodsse.Signature{{Sig: sig, Keyid: env.Signatures[0].KeyID}},
		}},
	}
	out, err := protojson.Marshal(b)
	check(a.t, err)
	return out
}

// logEntry is the Rekor entry of a signed envelope with both its inclusion
// proof and its promise (a signed entry timestamp), as npm's bundles have.
func (a *Authority) logEntry(leaf *x509.Certificate, env *dsse.Envelope, sig []byte, now time.Time) *protorekor.TransparencyLogEntry {
	entry, err := a.log.GenerateTlogEntry(leaf, env, sig, now.Unix(), true)
	check(a.t, err)
	tle := entry.TransparencyLogEntry()
	set, err := a.log.RekorSignPayload(tlog.RekorPayload{
		Body:           base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
		IntegratedTime: tle.IntegratedTime,
		LogIndex:       tle.LogIndex,
		LogID:          hex.EncodeToString([]byte(entry.LogKeyID())),
	})
	check(a.t, err)
	tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
	tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"}
	return tle
}

// Attestations is the registry's /-/npm/v1/attestations/NAME@VERSION
// document holding the provenance bundle (npm's own publish attestation,
// signed by npm's key, is left out: provenance.Verify does not read it).
func Attestations(bundle []byte) []byte {
	doc, _ := json.Marshal(map[string]any{"attestations": []any{map[string]any{
		"predicateType": provenance.SLSAProvenanceV1,
		"bundle":        json.RawMessage(bundle),
	}}})
	return doc
}

// Fulcio's certificate extensions (docs/oid-info.md in sigstore/fulcio).
var (
	oidIssuer         = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}
	oidBuildSigner    = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 9}
	oidSourceRepo     = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 12}
	oidSourceDigest   = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 13}
	oidSourceRef      = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 14}
	oidBuildConfigURI = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 18}
)

// leaf is a Fulcio-like code-signing certificate for id, as GitHub Actions
// gets one: the workflow's URI as SAN, the build's facts as extensions.
func (a *Authority) leaf(id provenance.Identity, key *ecdsa.PrivateKey, now time.Time) *x509.Certificate {
	workflow := id.Repository + "/" + id.Workflow + "@" + id.Ref
	var exts []pkix.Extension
	for _, e := range []struct {
		oid asn1.ObjectIdentifier
		val string
	}{
		{oidIssuer, id.Issuer}, {oidBuildSigner, workflow}, {oidSourceRepo, id.Repository},
		{oidSourceDigest, id.Commit}, {oidSourceRef, id.Ref}, {oidBuildConfigURI, workflow},
	} {
		der, err := asn1.MarshalWithParams(e.val, "utf8")
		check(a.t, err)
		exts = append(exts, pkix.Extension{Id: e.oid, Value: der})
	}
	san, err := url.Parse(workflow)
	check(a.t, err)
	tmpl := &x509.Certificate{
		SerialNumber:    big.NewInt(now.UnixNano()),
		URIs:            []*url.URL{san},
		NotBefore:       now.Add(-time.Minute),
		NotAfter:        now.Add(10 * time.Minute),
		KeyUsage:        x509.KeyUsageDigitalSignature,
		ExtKeyUsage:     []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		ExtraExtensions: exts,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.fulcio.Intermediates[0], &key.PublicKey, a.issuer)
	check(a.t, err)
	cert, err := x509.ParseCertificate(der)
	check(a.t, err)
	return cert
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
