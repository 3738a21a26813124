// Package demo holds the bundled example MCP server and the demo driver,
// both built into the mcpsandbox-demo binary (the server as its
// `example-server` subcommand), so the demo needs nothing but that binary and
// the mcpsandbox binary hosts start links none of it. The example server's
// tools misbehave on request (crash, hang, garbage output, huge results) to
// show what supervision does about it. The driver plays the host: it runs a
// session through the supervisor and reports what it saw.
package demo
