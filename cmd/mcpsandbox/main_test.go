package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/demo"
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/pinfixture"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// asCLI as the first argument makes the test binary behave as the
// mcpsandbox binary, so tests can run the real command line (and start it as
// an MCP server) without building anything.
const asCLI = "-test.as-mcpsandbox"

// asExampleServer makes it the bundled example server, which the
// mcpsandbox binary no longer carries (mcpsandbox-demo example-server
// does), for tests to put behind `run`.
const asExampleServer = "-test.as-example-server"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == asCLI {
		os.Exit(cliOwnLock(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == asExampleServer {
		if err := demo.ServeExample(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "example server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == asStandIn {
		os.Exit(serveStandIn())
	}
	if len(os.Args) > 2 && os.Args[1] == asPinnedServer {
		if err := pinfixture.Serve(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "pinned fixture:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == asHost {
		os.Exit(hostRole())
	}
	os.Exit(runTests(m))
}

// runTests runs the tests with the default lock (MCPSANDBOX_LOCK) in a
// directory of their own, not the user's (root's is /etc/mcpsandbox's):
// prepare and run record servers in it. Tests that prepare one server at
// two versions each take a lock of their own (newStateBase).
func runTests(m *testing.M) int {
	if os.Getenv("MCPSANDBOX_LOCK") == "" {
		dir, err := os.MkdirTemp("", "mcpsandbox-test-lock-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		os.Setenv("MCPSANDBOX_LOCK", filepath.Join(dir, "lock.json"))
	}
	return m.Run()
}

// cliOwnLock runs the command line with a lock of its own unless the test
// names one (--lock, or MCPSANDBOX_LOCK): the fixture servers of these
// tests are all this binary, one identity, each serving other tools, so
// a shared lock would hold one test's tools for another's; and the user's
// lock (root's /etc/mcpsandbox/lock.json) is never written.
func cliOwnLock(args []string) int {
	if os.Getenv("MCPSANDBOX_LOCK") != "" {
		return cli(args, stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	}
	dir, err := os.MkdirTemp("", "mcpsandbox-test-lock-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Setenv("MCPSANDBOX_LOCK", filepath.Join(dir, "lock.json"))
	return cli(args, stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
}

// requireConfinement skips a confined test under -short when this user
// cannot confine here (see testenv.RequireConfinement).
func requireConfinement(t *testing.T) {
	t.Helper()
	testenv.RequireConfinement(t, func() error { return sandbox.Doctor().Problem(field.Plain) })
}
