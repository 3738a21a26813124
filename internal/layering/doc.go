// Package layering holds no code, only a test: the house rules of which
// package may depend on which, checked against the whole module's import
// graph as `go list -deps` reports it for the non-test build.
//
// The layers, top to bottom:
//
//	cmd → (daemon) → supervisor → {healthcheck, sandbox, policy}
//
// and sandbox (the confinement) knows nothing of MCP, policies or the
// supervisor; policy is a leaf.
//
// It is a package of its own because the rules are about the module as a
// whole: a check in sandbox's or supervisor's tests would make that package
// own rules about all the others, and would be skipped whenever only one
// package's tests run. Here it runs with ./... like every other test, and
// its failure names the import chain that breaks a rule.
package layering
