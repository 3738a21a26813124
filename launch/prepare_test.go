package launch

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestPrepareStep(t *testing.T) {
	matches := builtins(t)
	h := testHost(t, t.TempDir())
	for _, c := range []struct {
		cmd, want []string
		env       string
	}{
		{[]string{"npx", "-y", "@scope/pkg@1.2.3", "--flag", "arg"},
			[]string{"npx", "--yes", "--package=@scope/pkg@1.2.3", "--", "true"}, "npm_config_offline=false"},
		{[]string{"npx", "@modelcontextprotocol/server-memory@2026.8.31"},
			[]string{"npx", "--yes", "--package=@modelcontextprotocol/server-memory@2026.8.31", "--", "true"}, "npm_config_offline=false"},
		{[]string{"npx", "--yes", "--package=@modelcontextprotocol/server-everything", "--", "mcp-server-everything"},
			[]string{"npx", "--yes", "--package=@modelcontextprotocol/server-everything", "--", "true"}, "npm_config_offline=false"},
		{[]string{"npx", "-p", "a@1", "-p", "b@^2", "cmd", "x"},
			[]string{"npx", "--yes", "--package=a@1", "--package=b@^2", "--", "true"}, "npm_config_offline=false"},
		{[]string{"uvx", "mcp-server-time@2025.1.0", "--local-timezone", "UTC"},
			[]string{"uvx", "--from", "mcp-server-time@2025.1.0", "python", "-c", ""}, "UV_OFFLINE=0"},
		{[]string{"uvx", "--from", "mcp-server-git==0.6.2", "mcp-server-git", "--repository", "/r"},
			[]string{"uvx", "--from", "mcp-server-git==0.6.2", "python", "-c", ""}, "UV_OFFLINE=0"},
		// What the run's environment holds must be fetched too.
		{[]string{"uvx", "--python", "3.12", "--with", "extra==1", "--from=tool", "tool"},
			[]string{"uvx", "--python", "3.12", "--with", "extra==1", "--from", "tool", "python", "-c", ""}, "UV_OFFLINE=0"},
	} {
		step, err := Read(c.cmd, matches, h).PrepareStep()
		if err != nil || !slices.Equal(step.Command, c.want) || !slices.Contains(step.Env, c.env) {
			t.Errorf("PrepareStep(%q) = %q env %q (%v), want %q with %s", c.cmd, step.Command, step.Env, err, c.want, c.env)
		}
	}

	for _, cmd := range [][]string{{"node", "x.js"}, {"python3", "-m", "mcp_server_fetch"}, {"sh", "-c", "npx -y x"}, {}} {
		if _, err := Read(cmd, matches, h).PrepareStep(); !errors.Is(err, ErrNothingToPrepare) {
			t.Errorf("PrepareStep(%q): %v, want ErrNothingToPrepare", cmd, err)
		}
	}
	for _, cmd := range [][]string{{"npx", "-c", "x"}, {"npx", "--"}, {"npx"}, {"uvx", "--bogus", "x"}, {"uvx"}} {
		_, err := Read(cmd, matches, h).PrepareStep()
		if err == nil || errors.Is(err, ErrNothingToPrepare) || strings.HasSuffix(err.Error(), ": ") {
			t.Errorf("PrepareStep(%q): %v, want why this line cannot be prepared", cmd, err)
		}
	}
}
