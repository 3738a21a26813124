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
// Requests go through net/http with a Transport of the Client's own: a
// bounded header and body, a timeout for each step and for the whole, at
// most 5 redirects and never from https to http. It sends no credentials
// but those in the registry URL itself. It goes through no proxy: neither
// HTTPS_PROXY and the like from the environment nor npm's proxy settings,
// since the registry is the one host prepare reaches and a proxy a shell
// happens to export should not see, or stand in for, it; a registry
// reachable only through a proxy is not supported yet.
//
// Not every registry signs. The public registry publishes ECDSA P-256 keys
// at /-/npm/v1/keys and signs "NAME@VERSION:INTEGRITY" with them; a
// registry that serves no keys (404, as mirrors and the registry reachable
// from mcpsandbox's own CI do) yields RegistryServesNoKeys, which callers
// log: it is not a pass. Verification is tested against a registry served
// on loopback (internal/testregistry) with keys the tests make; it has not
// been tried against a registry that signs.
package npmregistry
