// Command mcpnet is the egress tests' MCP server. Its tool connect runs a
// real network client (see internal/testnet/netclient) against a URL as a
// subprocess and returns what it showed, so a test drives real clients from
// inside the sandbox through an ordinary tools/call.
//
//	mcpnet serve --dir D --ca F --node N ...   the MCP stdio server
//	mcpnet get URL                             Go's net/http client
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testnet/netclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: mcpnet serve [kit flags] | mcpnet get URL")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		var kit netclient.Kit
		fs := flag.NewFlagSet("serve", flag.ExitOnError)
		kit.Flags(fs)
		fs.Parse(os.Args[2:])
		if err := serve(&kit); err != nil {
			fmt.Fprintln(os.Stderr, "mcpnet:", err)
			os.Exit(1)
		}
	case "get":
		if len(os.Args) != 3 {
			fmt.Fprintln(os.Stderr, "usage: mcpnet get URL")
			os.Exit(2)
		}
		os.Exit(get(os.Args[2]))
	default:
		fmt.Fprintf(os.Stderr, "mcpnet: unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}

type connectArgs struct {
	Client string `json:"client" jsonschema:"one of node-fetch, node-https, node-ws, python-urllib, go-http, curl, psql"`
	URL    string `json:"url" jsonschema:"what the client connects to"`
}

func serve(kit *netclient.Kit) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpnet", Version: "0.1.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "connect", Description: "run a network client against a URL; the result is its exit status and output (JSON)"},
		func(ctx context.Context, _ *mcp.CallToolRequest, a connectArgs) (*mcp.CallToolResult, any, error) {
			return jsonResult(kit.Run(ctx, a.Client, a.URL))
		})
	return s.Run(context.Background(), &mcp.StdioTransport{})
}

func jsonResult(v any) (*mcp.CallToolResult, any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
}

// get is the Go client: GET url, print the body, 1 unless 2xx. Its
// transport reads no proxy setting, and its resolver (pure Go, the binary
// is static) reads /etc/resolv.conf.
func get(url string) int {
	timeout := netclient.Timeout
	if s, err := strconv.Atoi(os.Getenv("MCPNET_TIMEOUT_SECONDS")); err == nil {
		timeout = time.Duration(s) * time.Second
	}
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: nil, ForceAttemptHTTP2: true}}
	res, err := client.Get(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, "net/http failed:", err)
		return 1
	}
	defer res.Body.Close()
	if _, err := io.Copy(os.Stdout, res.Body); err != nil {
		fmt.Fprintln(os.Stderr, "net/http: reading the body:", err)
		return 1
	}
	if res.StatusCode/100 != 2 {
		fmt.Fprintln(os.Stderr, "net/http:", res.Status)
		return 1
	}
	return 0
}
