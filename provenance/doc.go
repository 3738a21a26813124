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
package provenance
