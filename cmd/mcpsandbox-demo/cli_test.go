package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
)

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli(args, cmdline.Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

func TestBadCommandLinesExit2NamingTheFix(t *testing.T) {
	cases := []struct {
		args []string
		want []string // all must appear on stderr
	}{
		{[]string{"--unconfind"}, []string{"did you mean --unconfined?", "mcpsandbox-demo --help"}},
		{[]string{"extra"}, []string{`unexpected argument "extra"`}},
		{[]string{"example-server", "--stdio"}, []string{"unknown option --stdio", "mcpsandbox-demo example-server --help"}},
		{[]string{"example-server", "extra"}, []string{`unexpected argument "extra"`}},
	}
	for _, c := range cases {
		stdout, stderr, code := runCLI(t, c.args...)
		if code != cmdline.ExitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", c.args, code, cmdline.ExitUsage, stderr)
		}
		if stdout != "" {
			t.Errorf("%q: wrote %q to stdout, which belongs to the MCP host", c.args, stdout)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: stderr %q lacks %q", c.args, stderr, w)
			}
		}
	}
}

// The demo and the example server each have a man page for --help and -h.
func TestEveryCommandHasAManPage(t *testing.T) {
	for _, name := range []string{"mcpsandbox-demo", "mcpsandbox-demo example-server"} {
		args := strings.Fields(name)[1:]
		page, stderr, code := runCLI(t, append(args, "--help")...)
		if code != cmdline.ExitOK || stderr != "" {
			t.Errorf("%s --help: exit %d, stderr %q", name, code, stderr)
		}
		for _, section := range []string{"NAME\n    " + name + " - ", "SYNOPSIS\n", "DESCRIPTION\n", "OPTIONS\n", "--help", "EXIT STATUS\n", "EXAMPLES\n"} {
			if !strings.Contains(page, section) {
				t.Errorf("%s --help lacks %q", name, section)
			}
		}
		if short, _, _ := runCLI(t, append(args, "-h")...); short != page {
			t.Errorf("%s -h differs from %s --help", name, name)
		}
		for i, line := range strings.Split(page, "\n") {
			if len(line) > cmdline.Width && !strings.HasPrefix(line, "        ") {
				t.Errorf("%s --help line %d is %d wide: %q", name, i+1, len(line), line)
			}
		}
	}
}

// `mcpsandbox-demo example-server` serves MCP on its stdio.
func TestExampleServerServes(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "demo-cli-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(exe, asCLI, "example-server")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"echo", "crash", "hang", "probe"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Errorf("echo: %+v, %v", res, err)
	}
}
