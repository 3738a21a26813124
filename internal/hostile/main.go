//go:build linux

// Command hostile is a test-only MCP server that attacks the sandbox it runs
// in: its `escape` tool tries every escape class of DESIGN.md §2 and reports
// which ones the confinement stopped, its bomb tools exhaust memory, pids
// and /tmp, and its flood tool attacks the relay and its log with raw lines
// (floods.go). It is a package of its own because the sandbox and supervisor
// tests build it into a standalone static binary and run it confined; it is
// never shipped and must never run outside a sandbox and an outer cgroup.
//
// Every attempt is harmless even when it succeeds: it only touches canaries
// the test names in the tool's arguments, writes back values it just read, or
// opens for writing without writing.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Child modes: argv[1] of the hostile binary re-executed by its own probes.
const (
	modePause     = "pause"  // block until killed (fork bomb children, ptrace targets)
	modeNoop      = "noop"   // exit 0 at once (namespace creation probes)
	modeCanary    = "canary" // host canary: block until killed; argv[2] is a token
	modeInt80     = "int80"  // i386 syscall through int $0x80
	modeX32       = "x32"    // x32 syscall
	modeServe     = "serve"  // the MCP server (also the default)
	instanceIDLen = 16
)

func main() {
	mode := modeServe
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case modePause, modeCanary:
		pauseForever()
	case modeNoop:
		os.Exit(0)
	case modeInt80, modeX32:
		os.Exit(runArchChild(mode))
	case modeServe:
		if err := serve(); err != nil {
			fmt.Fprintln(os.Stderr, "hostile:", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "hostile: unknown mode %q\n", mode)
		os.Exit(2)
	}
}

func serve() error {
	s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "0.1.0"}, nil)
	tap := &stdinTap{r: os.Stdin}
	addTools(s)
	addFloodTools(s, tap)
	return s.Run(context.Background(), &mcp.IOTransport{Reader: tap, Writer: os.Stdout})
}
