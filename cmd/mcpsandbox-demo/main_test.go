package main

import (
	"os"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
)

// asCLI as the first argument makes the test binary behave as the
// mcpsandbox-demo binary, so tests can run its real command line.
const asCLI = "-test.as-mcpsandbox-demo"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == asCLI {
		os.Exit(cli(os.Args[2:], cmdline.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
	}
	os.Exit(m.Run())
}
