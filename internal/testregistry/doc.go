// Package testregistry is an npm registry for tests: packuments with the
// versions, dist-tags and publish times a test gives, tarballs built from
// the files it gives, registry signatures by an ECDSA P-256 key made per
// registry and served at /-/npm/v1/keys, attestation documents holding the
// bundles a test supplies, and switches that tamper with each of them.
//
// A Registry is an http.Handler: a test serves it on 127.0.0.1 (Start) or
// on the test network under testnet.RegistryName (testnet.Env.AddHost),
// where npm, npx and mcpsandbox prepare install from it. URLs in its
// documents name the host a request came to.
//
// It is a package of its own because npmregistry's tests and the command's
// end-to-end tests both serve it, and it is needed because the registry
// reachable from CI serves neither signatures nor attestations.
package testregistry
