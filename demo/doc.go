// Package demo holds the bundled example MCP server and the `mcpsandbox demo`
// driver. The example server is built into the mcpsandbox binary (hidden
// `example-server` subcommand) so the demo and the tests need nothing but the
// binary: its tools misbehave on request (crash, hang, garbage output, huge
// results) to show what supervision does about it. The driver plays the host:
// it runs a session through the supervisor and reports what it saw.
package demo
