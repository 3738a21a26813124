// Package testnet is the egress tests' network of their own: two network
// namespaces joined by veth (the supervisor's "client" side and the
// "upstream" side holding the test hosts), a DNS server answering the test
// names, and real services on the test hosts (HTTP, HTTPS with a CA made per
// run, a WebSocket echo, PostgreSQL) that record every connection, so a test
// can show both that an allowed client got through and that a refused one
// reached nothing.
//
// Only loopback and the documentation ranges (192.0.2.0/24, 198.51.100.0/24,
// 203.0.113.0/24) are ever used. The namespaces have no names: they are held
// by file descriptors and vanish with the test's last reference, so nothing
// outlives a test, even one that is killed, and tests may run in parallel.
// Making namespaces needs root: Start skips the test otherwise.
//
// It is its own package because the harness's own tests and the command's
// end-to-end tests both use it; the clients it drives live in
// internal/testnet/netclient, which the MCP test server links alone.
package testnet
