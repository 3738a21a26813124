package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stand-in server behind the error-code tests (codes_sdk_test.go): a Go
// SDK server whose tools provoke each of mcpsandbox's codes. Its gates are
// FIFOs in the directory it is given, which the test's client writes to:
// they pass the server's own signal back without going through the relay,
// so nothing waits on a clock.

// asCodesStandIn makes the test binary the stand-in: ARGS are DIR.
const asCodesStandIn = "-test.as-codes-standin"

// restartGate, when the FIFO exists at start, holds the new process before
// it reads its first message until a client writes a byte to it.
const restartGate = "restart-gate"

// Markers the stand-in's stdout rewrites into what no host can parse.
const (
	invalidUTF8Marker = "@@invalid-utf8@@"
	tooDeepMarker     = `"@@too-deep@@"`
)

// init rather than TestMain: the dispatch lives beside the server it starts.
func init() {
	if len(os.Args) == 3 && os.Args[1] == asCodesStandIn {
		os.Exit(serveCodesStandIn(os.Args[2]))
	}
}

type (
	codesText struct {
		Text string `json:"text"`
	}
	codesBytes struct {
		Bytes int `json:"bytes"`
	}
	codesCrash struct {
		Code        int  `json:"code"`
		HoldRestart bool `json:"holdRestart,omitempty"` // the next process waits at restartGate
	}
	codesInvalid struct {
		How string `json:"how"`
	} // "utf8" or "deep"
	codesHold struct {
		Gate string `json:"gate"`
	}
	codesNone struct{}
)

func serveCodesStandIn(dir string) int {
	if err := waitGate(context.Background(), filepath.Join(dir, restartGate), true); err != nil {
		fmt.Fprintln(os.Stderr, "codes stand-in:", err)
		return 1
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "codes-standin", Version: "1"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a codesText) (*mcp.CallToolResult, any, error) {
			return text(a.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Returns bytes x's."},
		func(_ context.Context, _ *mcp.CallToolRequest, a codesBytes) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("x", a.Bytes)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits mid-call with code."},
		func(_ context.Context, _ *mcp.CallToolRequest, a codesCrash) (*mcp.CallToolResult, any, error) {
			if a.HoldRestart {
				if err := syscall.Mkfifo(filepath.Join(dir, restartGate), 0o600); err != nil {
					return nil, nil, err
				}
			}
			fmt.Fprintf(os.Stderr, "codes stand-in: exiting with status %d mid-call\n", a.Code)
			os.Exit(a.Code)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "invalid", Description: "Answers with invalid UTF-8 (how utf8) or nesting 200 deep (how deep)."},
		func(_ context.Context, _ *mcp.CallToolRequest, a codesInvalid) (*mcp.CallToolResult, any, error) {
			if a.How == "deep" {
				return text(strings.Trim(tooDeepMarker, `"`)), nil, nil
			}
			return text(invalidUTF8Marker), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hold", Description: "Reports progress, then returns once a byte is written to the FIFO gate, or when cancelled."},
		func(ctx context.Context, req *mcp.CallToolRequest, a codesHold) (*mcp.CallToolResult, any, error) {
			path := filepath.Join(dir, filepath.Base(a.Gate))
			if err := syscall.Mkfifo(path, 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
				return nil, nil, err
			}
			// Opened before the progress report, so the client's write that
			// follows it finds a reader.
			opened := make(chan struct{})
			errc := make(chan error, 1)
			go func() { errc <- waitGateOpened(ctx, path, opened) }()
			select {
			case <-opened:
			case err := <-errc:
				return nil, nil, err
			}
			if tok := req.Params.GetProgressToken(); tok != nil {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Message: "holding at " + a.Gate}); err != nil {
					return nil, nil, err
				}
			}
			if err := <-errc; err != nil {
				fmt.Fprintf(os.Stderr, "codes stand-in: hold at %s ended: %v\n", a.Gate, err)
				return nil, nil, err
			}
			return text("released"), nil, nil
		})
	for _, name := range []string{"forbidden", "limited"} {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Says it was reached."},
			func(_ context.Context, _ *mcp.CallToolRequest, _ codesNone) (*mcp.CallToolResult, any, error) {
				return text(name + " reached the server"), nil, nil
			})
	}
	out := &corruptingStdout{}
	if err := s.Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: out}); err != nil {
		fmt.Fprintln(os.Stderr, "codes stand-in:", err)
		return 1
	}
	return 0
}

// waitGate waits for a byte on the FIFO at path; with optional, a missing
// FIFO means no wait. A restart gate is removed once passed, so that only
// one process waits at it.
func waitGate(ctx context.Context, path string, optional bool) error {
	if _, err := os.Stat(path); optional && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := waitGateOpened(ctx, path, nil); err != nil {
		return err
	}
	return os.Remove(path)
}

// waitGateOpened opens the FIFO read-write (which never blocks and never
// sees end of file), closes opened, and reads one byte or stops at ctx.
func waitGateOpened(ctx context.Context, path string, opened chan<- struct{}) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if opened != nil {
		close(opened)
	}
	stop := context.AfterFunc(ctx, func() { f.Close() }) // a FIFO is pollable: Close ends the Read
	defer stop()
	defer f.Close()
	var b [1]byte
	if _, err := f.Read(b[:]); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}

// corruptingStdout is the server's stdout; it turns the invalid tool's
// markers into invalid UTF-8 and nesting 200 deep, which the SDK would
// never encode itself. The SDK writes each message in one Write.
type corruptingStdout struct{}

var tooDeep = []byte(strings.Repeat("[", 200) + strings.Repeat("]", 200))

func (corruptingStdout) Write(p []byte) (int, error) {
	q := bytes.ReplaceAll(p, []byte(invalidUTF8Marker), []byte{0xff, 0xfe})
	q = bytes.ReplaceAll(q, []byte(tooDeepMarker), tooDeep)
	if _, err := os.Stdout.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (corruptingStdout) Close() error { return os.Stdout.Close() }
