// Command mcpsandbox runs third-party stdio MCP servers confined and supervised.
package main

import (
	"os"

	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

func main() {
	// First: when this process is a sandbox init stage it never returns.
	sandbox.InitStage()
	os.Exit(cli(os.Args[1:], stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}
