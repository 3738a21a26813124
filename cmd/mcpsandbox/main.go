// Command mcpsandbox runs third-party stdio MCP servers confined and supervised.
package main

import (
	"os"
)

func main() {
	os.Exit(cli(os.Args[1:], stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}
