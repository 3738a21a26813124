// Command mcpsandbox-demo shows what mcpsandbox does, on a bundled example
// server that crashes and hangs on request, and serves that example server
// (`mcpsandbox-demo example-server`) for any host to try behind
// `mcpsandbox run`. It is a program of its own because it links the MCP Go
// SDK (with its HTTP and TLS code), which the mcpsandbox binary, started
// by hosts for every server, must not load.
package main

import (
	"os"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
)

func main() {
	os.Exit(cli(os.Args[1:], cmdline.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}

// cli runs the demo, or with example-server first, the example server.
func cli(args []string, std cmdline.Stdio) int {
	if len(args) > 0 && args[0] == "example-server" {
		return exampleServerCommand(args[1:], std)
	}
	return demoCommand(args, std)
}
