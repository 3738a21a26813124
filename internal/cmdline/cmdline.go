// Package cmdline holds what the commands share: the man-page layout of their
// --help, the way they report a wrong command line, and their exit
// statuses. Each binary (mcpsandbox, mcpsandbox-demo) keeps its own
// commands; this package imports nothing of the module, so it adds nothing
// to the start of the binary MCP hosts run.
package cmdline

import "io"

// Exit statuses shared by every command.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Stdio is a command's standard streams.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}
