// Package npmregistry asks an npm registry what a package is: it resolves a
// spec (pkg, pkg@latest, pkg@^1.2, pkg@1.2.3, a dist-tag, @scope/pkg@…) to
// an exact version as npm does, and reports that version's facts (sha512
// integrity, tarball, publish time, mcpName, registry signatures,
// attestations); it checks a tarball against its integrity, checks npm's
// registry signatures against the keys the registry serves, fetches the
// Sigstore bundles of a version's attestations for another package to
// verify, and tells whether a version is younger than a cooldown.
//
// It is a package of its own because it is the one part of mcpsandbox that
// speaks to a package registry: launch reads launch lines, the lock stores
// what was decided, prepare drives npm in a sandbox; none of them should
// hold HTTP, JSON documents of the registry's and signature checks. It
// knows nothing of policy, the lock or confinement: callers pass the
// registry URL (prepare finds it as npm does), the clock and the cooldown.
//
// The mcpsandbox binary that hosts start for every server links no
// net/http (internal/layering), so requests go through a small HTTP/1.1
// client of its own (GET only: http and https, Content-Length, chunked and
// gzip bodies, a few redirects, a bounded body and a timeout). It sends no
// credentials but those in the registry URL itself and goes through no
// proxy.
//
// Not every registry signs. The public registry publishes ECDSA P-256 keys
// at /-/npm/v1/keys and signs "NAME@VERSION:INTEGRITY" with them; a
// registry that serves no keys (404, as mirrors and the registry reachable
// from mcpsandbox's own CI do) yields RegistryServesNoKeys, which callers
// log: it is not a pass. Verification is tested against a registry served
// on loopback (internal/testregistry) with keys the tests make; it has not
// been tried against a registry that signs.
package npmregistry
