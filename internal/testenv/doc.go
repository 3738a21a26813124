// Package testenv holds what tests in several packages need from the machine:
// the pinned npm reference servers, built binaries, outer resource limits,
// and checks they share (one answer per request).
// It is its own package because supervisor, sandbox and cmd tests all use it
// and none of them may import another's tests.
package testenv
