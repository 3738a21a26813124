package probe_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
	"github.com/mcpsandbox/mcpsandbox/supervisor/probe"
)

// Roles the test binary plays when the probe starts it (argv, since a
// confined child gets a cleared environment).
const (
	roleFixture = "mcpsandbox-test-role=probe-fixture"
	roleSilent  = "mcpsandbox-test-role=silent"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case roleFixture:
			serveFixture()
			os.Exit(0)
		case roleSilent:
			_, _ = io.Copy(io.Discard, os.Stdin) // reads, never answers
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}

// unroutable is a documentation address (RFC 5737) the fixture tries to
// reach: what the attempt ends with shows which network it had.
const unroutable = "192.0.2.1:80"

// serveFixture is a Go SDK server with tools on three pages (two a page),
// a prompt, a resource and a template; the tool "dial" describes what
// came of connecting out at its start.
func serveFixture() {
	dialed := "connected"
	if c, err := net.DialTimeout("tcp", unroutable, 2*time.Second); err != nil {
		dialed = err.Error()
	} else {
		c.Close()
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: 2, Instructions: "be kind"})
	for _, name := range []string{"a", "b", "c", "d", "dial"} {
		desc := "tool " + name
		if name == "dial" {
			desc = "dialing out at start: " + dialed + "; secret: " + os.Getenv("MCPSANDBOX_PROBE_SECRET")
		}
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: desc}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "say hello"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	s.AddResource(&mcp.Resource{URI: "file:///notes", Name: "notes"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///notes/{id}", Name: "note"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

func requireConfinement(t *testing.T) {
	t.Helper()
	testenv.RequireConfinement(t, func() error { return sandbox.Doctor().Problem(field.Plain) })
}

func probeOptions(t *testing.T, role string) supervisor.Options {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := policy.Default()
	p.Command = []string{exe, role}
	return supervisor.Options{Name: "fixture", Policy: p}
}

// The probe lists every page of every list, and its sandbox has no network
// even when the server's policy would give it the host's: the fixture's
// connection out fails at once, unreachable, where the host's network
// would have let it wait for an answer that never comes.
func TestProbeListsEverythingWithoutNetwork(t *testing.T) {
	requireConfinement(t)
	opts := probeOptions(t, roleFixture)
	opts.Policy.Net = policy.NetHost
	opts.Policy.Env = append(opts.Policy.Env, "MCPSANDBOX_PROBE_SECRET")
	opts.LookupEnv = func(string) (string, bool) { return "s3cret", true }
	l, err := probe.Run(context.Background(), opts, 0)
	if err != nil {
		t.Fatal(err)
	}
	items, err := l.Items()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var dial string
	for _, it := range items {
		names = append(names, it.Name())
		if it.Key == "dial" {
			var tool struct{ Description string }
			if err := json.Unmarshal(it.Text, &tool); err != nil {
				t.Fatal(err)
			}
			dial = tool.Description
		}
	}
	if got := len(l.Pages["tools/list"]); got != 3 {
		t.Errorf("tools/list pages read: %d, want 3", got)
	}
	want := []string{"tool:a", "tool:b", "tool:c", "tool:d", "tool:dial", "prompt:greet", "resource:file:///notes",
		"resourceTemplate:file:///notes/{id}", "instructions", "serverInfo", "capabilities"}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("the contract listed: %v, want %v", names, want)
	}
	// Net none's mark: the sandbox refuses the socket itself (under the
	// host's network the connection would wait for its timeout).
	if !strings.Contains(dial, "socket: operation not permitted") {
		t.Errorf("the fixture's connection out at start: %q, want its socket refused (no network in the probe)", dial)
	}
	if !strings.HasSuffix(dial, "secret: ") {
		t.Errorf("the fixture saw %q: a variable of mcpsandbox's own environment reached the probe", dial)
	}
}

// A server that never answers is cut off at the probe's timeout, with an
// error saying so.
func TestProbeTimesOut(t *testing.T) {
	requireConfinement(t)
	_, err := probe.Run(context.Background(), probeOptions(t, roleSilent), 500*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "timeout of 500ms passed") {
		t.Fatalf("probe of a silent server: %v, want the timeout named", err)
	}
}
