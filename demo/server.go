package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Names the example server declares; tests and the demo driver use them.
const (
	ExampleServerName = "mcpsandbox-example"
	ExampleResource   = "example://counter"
	ExamplePrompt     = "greet"
)

// Tool inputs. Field names are the JSON argument names.
type (
	textArgs struct {
		Text string `json:"text"`
	}
	bytesArgs struct {
		Bytes int `json:"bytes"`
	}
	sleepArgs struct {
		Ms int `json:"ms"`
	}
	crashArgs struct {
		Code int `json:"code"`
	}
	noArgs struct{}
)

// ServeExample runs the example server on in/out until in ends or ctx is
// done. Its tools:
//
//	echo {text}     returns text
//	big {bytes}     returns a text of that many bytes
//	sleep {ms}      returns after ms milliseconds
//	crash {code}    exits the process with code, mid-call, answering nothing
//	hang            the process stops reading and writing for good (pings too)
//	garbage {text}  writes text as a raw non-JSON line to stdout, then answers
//	instance        returns a random id of this process (changes on restart)
//	roots           asks the client for roots/list and returns how many
//	log {text}      sends text as a logging notification at level info
//	touch           bumps the counter resource and notifies its subscribers
//
// plus the subscribable resource ExampleResource and the prompt ExamplePrompt.
func ServeExample(ctx context.Context, in io.Reader, out io.Writer) error {
	g := &gate{out: out, stopped: make(chan struct{})}
	s := newExampleServer(g)
	t := &mcp.IOTransport{Reader: io.NopCloser(&gatedReader{r: in, g: g}), Writer: g}
	err := s.Run(ctx, t)
	if g.hung.Load() {
		// A wedged server does not notice its input closing either; only a
		// signal ends it.
		g.blockForever()
	}
	return err
}

// gate serialises writes to stdout (the transport's and the garbage tool's)
// and can freeze the process's I/O for the hang tool.
type gate struct {
	mu      sync.Mutex
	out     io.Writer
	hung    atomic.Bool
	stopped chan struct{}
}

func (g *gate) Write(p []byte) (int, error) {
	if g.hung.Load() {
		g.blockForever()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.out.Write(p)
}

func (g *gate) Close() error { return nil }

func (g *gate) hang() {
	g.hung.Store(true)
	g.blockForever()
}

// blockForever parks the caller. A sleep loop rather than a bare channel
// receive keeps the runtime's deadlock detector from ending the process:
// the point is a live process that answers nothing, ended only by a signal.
func (g *gate) blockForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// gatedReader stops consuming input once the process hangs, so requests pile
// up in the pipe unread, as with a real wedged server.
type gatedReader struct {
	r io.Reader
	g *gate
}

func (r *gatedReader) Read(p []byte) (int, error) {
	if r.g.hung.Load() {
		r.g.blockForever()
	}
	return r.r.Read(p)
}

func newExampleServer(g *gate) *mcp.Server {
	var counter atomic.Int64
	s := mcp.NewServer(&mcp.Implementation{Name: ExampleServerName, Version: "1.0.0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{
			//lint:ignore SA1019 the example offers logging so that logging/setLevel replay is exercised.
			Logging:   &mcp.LoggingCapabilities{},
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
		},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	instance := randomID()

	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns text unchanged."},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			return textResult(a.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Returns a text of the given size in bytes."},
		func(_ context.Context, _ *mcp.CallToolRequest, a bytesArgs) (*mcp.CallToolResult, any, error) {
			if a.Bytes < 0 || a.Bytes > 1<<30 {
				return nil, nil, fmt.Errorf("bytes must be between 0 and 1GiB")
			}
			return textResult(strings.Repeat("x", a.Bytes)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Returns after ms milliseconds."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a sleepArgs) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(a.Ms) * time.Millisecond):
				return textResult(fmt.Sprintf("slept %dms", a.Ms)), nil, nil
			case <-ctx.Done():
				// Said on stderr so a supervisor's log shows the cancellation arrived.
				fmt.Fprintln(os.Stderr, "example server: sleep cancelled")
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits the server process with code, mid-call."},
		func(_ context.Context, _ *mcp.CallToolRequest, a crashArgs) (*mcp.CallToolResult, any, error) {
			fmt.Fprintf(os.Stderr, "example server: crashing on request with status %d\n", a.Code)
			os.Exit(a.Code)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Stops answering anything, pings included."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "example server: hanging on request")
			g.hang()
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "garbage", Description: "Writes text as a raw non-JSON line to stdout, then answers."},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			line := strings.ReplaceAll(a.Text, "\n", " ") + "\n"
			if _, err := g.Write([]byte(line)); err != nil {
				return nil, nil, err
			}
			return textResult("wrote garbage"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: WipeTool, Description: "Would delete every file the server can write (it deletes nothing: the demo's policy denies it)."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ wipeArgs) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "example server: wipe was called")
			return textResult("wipe reached the server"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "instance", Description: "Returns a random id of this server process."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			return textResult(instance), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "Asks the client for its roots and returns how many."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			//lint:ignore SA1019 the example asks for roots so that server→client requests are exercised.
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, nil, err
			}
			return textResult(fmt.Sprintf("%d roots", len(res.Roots))), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "log", Description: "Sends text as a logging notification at level info."},
		func(ctx context.Context, req *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			//lint:ignore SA1019 the example exercises logging/setLevel replay.
			err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: a.Text})
			return textResult("logged"), nil, err
		})
	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Bumps the counter resource and notifies subscribers."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			n := counter.Add(1)
			err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: ExampleResource})
			return textResult(fmt.Sprintf("counter %d", n)), nil, err
		})

	s.AddResource(&mcp.Resource{URI: ExampleResource, Name: "counter", MIMEType: "text/plain",
		Description: "How often touch was called in this server process."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
				URI: req.Params.URI, MIMEType: "text/plain", Text: fmt.Sprint(counter.Load()),
			}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: ExamplePrompt, Description: "Greets someone.",
		Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{
				Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["name"]},
			}}}, nil
		})
	addProbeTool(s)
	return s
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func randomID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
