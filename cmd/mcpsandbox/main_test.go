package main

import (
	"os"
	"testing"
)

// asCLI as the first argument makes the test binary behave as the
// mcpsandbox binary, so tests can run the real command line (and start it as
// an MCP server) without building anything.
const asCLI = "-test.as-mcpsandbox"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == asCLI {
		os.Exit(cli(os.Args[2:], stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
	}
	if len(os.Args) > 1 && os.Args[1] == asHost {
		os.Exit(hostRole())
	}
	os.Exit(m.Run())
}
