// Package demo holds the bundled example MCP server and the `mcpsandbox-demo`
// driver. The example server is built into the mcpsandbox-demo binary
// (`example-server` subcommand) so the demo needs nothing but that binary,
// and the mcpsandbox binary hosts start links none of it: its tools misbehave on request (crash, hang, garbage output, huge
// results) to show what supervision does about it. The driver plays the host:
// it runs a session through the supervisor and reports what it saw.
package demo
