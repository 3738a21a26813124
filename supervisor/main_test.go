package supervisor_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/demo"
	"github.com/mcpsandbox/mcpsandbox/internal/pinfixture"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// Roles the test binary plays when re-executed. They are passed in argv,
// not the environment, because confined children get a cleared one.
const (
	roleExampleServer = "mcpsandbox-test-role=example-server"
	roleSupervisor    = "mcpsandbox-test-role=supervisor"
	roleNoPingServer  = "mcpsandbox-test-role=noping-server"
	rolePagedServer   = "mcpsandbox-test-role=paged-server"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case roleExampleServer:
			if err := demo.ServeExample(context.Background(), os.Stdin, os.Stdout); err != nil {
				fmt.Fprintln(os.Stderr, "example server:", err)
			}
			os.Exit(0)
		case roleSupervisor:
			os.Exit(runSupervisorRole())
		case roleNoPingServer:
			serveWithoutPing()
			os.Exit(0)
		case roleFetchServer:
			serveFetch()
			os.Exit(0)
		case rolePinnedServer:
			pinfixture.Serve(os.Args[2])
			os.Exit(0)
		case roleForgerServer:
			serveForger()
			os.Exit(0)
		case rolePagedServer:
			servePaged()
			os.Exit(0)
		case roleRulesServer:
			serveRules()
			os.Exit(0)
		case roleOutcomeServer:
			serveOutcomes()
			os.Exit(0)
		case roleListServer:
			serveList()
			os.Exit(0)
		case roleAnswerServer:
			serveAnswers()
			os.Exit(0)
		case roleLookupServer:
			serveLookups(os.Args[2:])
			os.Exit(0)
		case roleUpgradedServer:
			serveUpgraded(os.Args[2])
			os.Exit(0)
		case roleFetchesOnCall:
			serveFetchesOnCall(os.Args[2])
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}

// runSupervisorRole runs supervisor.Run on this process's stdio around the
// example server (confined unless argv[2] is "unconfined"), reporting each
// event on stderr as "EVENT kind gen pid".
func runSupervisorRole() int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	pol := policy.Default()
	pol.Unconfined = len(os.Args) > 2 && os.Args[2] == "unconfined"
	pol.Command = []string{exe, roleExampleServer}
	out, err := supervisor.Run(context.Background(), supervisor.Options{
		Name:      "example",
		Policy:    pol,
		HostIn:    os.Stdin,
		HostOut:   os.Stdout,
		Log:       slog.New(slog.NewTextHandler(os.Stderr, nil)),
		LookupEnv: os.LookupEnv,
		Events: func(e supervisor.Event) {
			fmt.Fprintf(os.Stderr, "EVENT %s %d %d\n", e.Kind, e.Generation, e.Pid)
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if out.Failed {
		return 1
	}
	return 0
}

// serveWithoutPing is a Go SDK server that answers ping with -32601, as
// servers of the stateless protocol may.
func serveWithoutPing() {
	s := mcp.NewServer(&mcp.Implementation{Name: "noping", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "ping" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
			}
			return next(ctx, method, req)
		}
	})
	s.Run(context.Background(), &mcp.StdioTransport{})
}
