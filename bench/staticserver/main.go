// Command staticserver is the bundled example MCP server built without cgo,
// so spawn benchmarks measure a static Go server as DESIGN.md §6 does.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mcpsandbox/mcpsandbox/demo"
)

func main() {
	if err := demo.ServeExample(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
