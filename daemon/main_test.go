package daemon_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/daemon"
)

// Roles the test binary plays when re-executed, passed in argv (confined
// children get a cleared environment).
const (
	// roleTokenServer is a Go SDK server that says on stderr, as it
	// starts, a token of its own process, and answers the tool token
	// with it: the token tells which process answered.
	roleTokenServer = "mcpsandbox-test-role=token-server"
	// roleConnectClient dials argv[2] (a socket) for each server named
	// after it ("control:REQUEST" sends that control request instead)
	// and prints each answer as a JSON line (the Refusal, or {"ok":true});
	// run as another uid for the peer check.
	roleConnectClient = "mcpsandbox-test-role=connect-client"
	// roleGatedTokenServer is the token server once a byte came through
	// the FIFO argv[2]: until then it answers nothing, the readiness ping
	// of a prestart included.
	roleGatedTokenServer = "mcpsandbox-test-role=gated-token-server"
	// roleHoldClient connects to server argv[3] at socket argv[2], says
	// "attached" on stdout, holds the session until the daemon ends it and
	// then says "closed".
	roleHoldClient = "mcpsandbox-test-role=hold-client"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case roleTokenServer:
			serveToken()
			os.Exit(0)
		case roleGatedTokenServer:
			if err := waitGate(os.Args[2]); err != nil {
				fmt.Fprintln(os.Stderr, "gate:", err)
				os.Exit(1)
			}
			serveToken()
			os.Exit(0)
		case roleConnectClient:
			os.Exit(connectClient(os.Args[2], os.Args[3:]))
		case roleHoldClient:
			os.Exit(holdClient(os.Args[2], os.Args[3]))
		}
	}
	os.Exit(m.Run())
}

type noArgs struct{}

type textArgs struct {
	Text string `json:"text"`
}

func serveToken() {
	b := make([]byte, 8)
	rand.Read(b)
	token := hex.EncodeToString(b)
	fmt.Fprintln(os.Stderr, "token server started: "+token)
	if len(os.Args) > 2 && os.Args[1] == roleTokenServer { // a version, as an upgraded launch line gives
		token += " " + os.Args[2]
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "token-server", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "token", Description: "This process's token."},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: token}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
		})
	s.Run(context.Background(), &mcp.StdioTransport{})
}

func connectClient(socket string, names []string) int {
	enc := json.NewEncoder(os.Stdout)
	for _, name := range names {
		if req, ok := strings.CutPrefix(name, "control:"); ok {
			_, a, err := daemon.Dial(socket, daemon.Hello{Control: req})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			if a.Error != nil {
				enc.Encode(a.Error)
			} else {
				enc.Encode(map[string]bool{"ok": true})
			}
			continue
		}
		c, refusal := daemon.ConnectTo([]string{socket}, name)
		if refusal != nil {
			enc.Encode(refusal)
			continue
		}
		c.Close()
		enc.Encode(map[string]bool{"ok": true})
	}
	return 0
}

// waitGate reads one byte from the FIFO at path, opened read-write so
// that the open does not wait for a writer.
func waitGate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Read(make([]byte, 1))
	return err
}

func holdClient(socket, name string) int {
	c, refusal := daemon.ConnectTo([]string{socket}, name)
	if refusal != nil {
		fmt.Fprintln(os.Stderr, refusal.Reason)
		return 1
	}
	fmt.Println("attached")
	io.Copy(io.Discard, c) // until the daemon closes the session
	fmt.Println("closed")
	return 0
}
