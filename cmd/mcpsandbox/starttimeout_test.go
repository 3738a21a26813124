package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// `mcpsandbox run` as a host starts it, under the default policy (no
// network), in front of a server that looks up its API's host and never
// answers: the host's initialize gets -31112 within --start-timeout,
// naming the host and the flag that allows it, in the CLI's words.
func TestRunAnswersAnInitializeTheServerNeverDoes(t *testing.T) {
	requireConfinement(t)
	lookup := `require("dns").lookup(process.argv[1], () => process.stdin.resume())`
	cmd := exec.Command(self(t), asCLI, "run", "--start-timeout", "3s", "--", "node", "-e", lookup, "mcp.stripe.com")
	var log testenv.LogBuffer
	cmd.Stderr = &log
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
		if t.Failed() {
			t.Logf("mcpsandbox's log:\n%s", log.String())
		}
	})
	// The lookup comes first, as a host's initialize would find it.
	if !log.WaitUntil(e2eWait, func(l string) bool { return strings.Contains(l, "name=mcp.stripe.com") }) {
		t.Fatal("the server's lookup was never logged")
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	var a struct {
		Error struct {
			Code    int
			Message string
			Data    struct{ DeniedHosts []string }
		}
	}
	json.Unmarshal(line, &a)
	want := "MCP server did not answer initialize within mcpsandbox's --start-timeout 3s: the server tried to reach mcp.stripe.com, which its policy does not allow (network mode none); allow it with --allow-host mcp.stripe.com"
	if a.Error.Code != -31112 || a.Error.Message != want || strings.Join(a.Error.Data.DeniedHosts, ",") != "mcp.stripe.com" {
		t.Errorf("answer %s\nwant -31112 %q", line, want)
	}
}
