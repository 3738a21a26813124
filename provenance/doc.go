// Package provenance verifies the Sigstore provenance the npm registry serves
// for a package version (its SLSA build attestation) and reads who built it:
// the CI issuer, the source repository, the workflow and the commit, from the
// Fulcio certificate that signed it.
//
// It is a package of its own because sigstore-go links a large dependency
// tree (Rekor, TUF, protobuf, timestamping) that only the commands that
// prepare or upgrade a package need: `run`, the supervisor, the sandbox,
// launch, resolve and policy must never link it (internal/layering keeps them
// off it).
//
// Trust comes from a Sigstore trusted root: the public-good instance's,
// which npm signs provenance with, fetched by mcpsandbox itself through
// Sigstore's TUF repository from the root embedded in sigstore-go and cached
// (PublicGood), or a trusted_root.json a user names (LoadRoot). Without one,
// nothing verifies: provenance is never passed unchecked.
//
// The tests verify npm's real bundles of the sigstore package against a
// snapshot of the public-good root, bundles of their own Sigstore
// (provenancetest) for everything that must fail, and the TUF fetch and its
// cache against a TUF repository of their own on loopback. Not tried here:
// fetching from tuf-repo-cdn.sigstore.dev itself and bundles served by the
// real registry's attestations endpoint, both out of the test machines' reach.
package provenance
