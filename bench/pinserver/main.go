// Command pinserver is the pin tests' fixture server (internal/pinfixture)
// as a program: it serves the contract its one argument carries, so the
// pin benchmarks list a server of the GitLab server's size.
package main

import (
	"fmt"
	"os"

	"github.com/mcpsandbox/mcpsandbox/internal/pinfixture"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pinserver CONTRACT_JSON")
		os.Exit(2)
	}
	if err := pinfixture.Serve(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
