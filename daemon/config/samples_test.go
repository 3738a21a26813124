package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/resolve"
)

// resolved resolves s as the daemon does (resolve.Resolve with the entry's
// command, policy and overrides, then Narrow) for a host that is not this
// process's, and checks the result is a valid policy.
func resolved(t *testing.T, c *Config, s *Server, env map[string]string) resolve.Resolution {
	t.Helper()
	home := t.TempDir()
	work := s.Cwd
	if work == "" {
		work = filepath.Dir(c.File)
	}
	env["PATH"] = "/usr/bin:/bin"
	host := launch.Host{Home: home, WorkDir: work, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	r, err := resolve.Resolve(resolve.Request{Command: s.Command, Policy: s.Policy, Overrides: s.Overrides, Given: s.Given, Host: host})
	if err != nil {
		t.Fatalf("%s: resolve: %v", s.Name, s.Place(err))
	}
	if err := s.Narrow(&r.Policy); err != nil {
		t.Fatalf("%s: narrow: %v", s.Name, err)
	}
	if err := r.Policy.Validate(); err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	return r
}

func names(c *Config) []string {
	var out []string
	for _, s := range c.Servers {
		out = append(out, s.Name)
	}
	return out
}

func TestSampleClaudeDesktop(t *testing.T) {
	c, err := Load("testdata/claude_desktop_config.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(c); !slices.Equal(got, []string{"filesystem", "memory", "github", "fetch", "sqlite"}) {
		t.Fatalf("servers %q", got)
	}
	for i := range c.Servers {
		s := &c.Servers[i]
		r := resolved(t, c, s, map[string]string{})
		switch s.Name {
		case "github":
			if !slices.Contains(r.Policy.Env, "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_exampleexampleexampleexample0000") || r.Policy.Net != policy.NetEgress {
				t.Errorf("github: env %q net %s", r.Policy.Env, r.Policy.Net)
			}
		case "memory":
			if !r.Chosen || r.Ref != "memory" {
				t.Errorf("memory: policy %q chosen %v, want the built-in the command selects", r.Ref, r.Chosen)
			}
		}
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings %q", c.Warnings)
	}
}

func TestSampleVSCode(t *testing.T) {
	t.Setenv("HOME", "/home/ann")
	c, err := Load("testdata/workspace/.vscode/mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := filepath.Abs("testdata/workspace")
	if got := names(c); !slices.Equal(got, []string{"memory", "filesystem", "github", "local"}) {
		t.Fatalf("servers %q", got)
	}
	if len(c.Warnings) != 2 || !strings.Contains(c.Warnings[0], `server "context7" is an http server`) || !strings.Contains(c.Warnings[1], "dev (VS Code's development mode") {
		t.Errorf("warnings %q", c.Warnings)
	}
	fs, _ := c.Server("filesystem")
	if !slices.Equal(fs.Command, []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", ws}) || fs.Cwd != ws {
		t.Errorf("filesystem: command %q cwd %q", fs.Command, fs.Cwd)
	}
	if !slices.Equal(fs.Overrides.ReadWrite, []string{ws}) || !slices.Equal(fs.Overrides.ReadOnly, []string{ws + "/.env"}) ||
		len(fs.Limits.DenyRead) != 1 || fs.Limits.DenyRead[0].Value != "/home/ann/.ssh" {
		t.Errorf("filesystem: rw %q ro %q deny read %+v", fs.Overrides.ReadWrite, fs.Overrides.ReadOnly, fs.Limits.DenyRead)
	}
	r := resolved(t, c, fs, map[string]string{})
	if r.Policy.Net != policy.NetNone {
		t.Errorf("filesystem: net %s, want none (allowedDomains is empty)", r.Policy.Net)
	}

	gh, _ := c.Server("github")
	if !slices.Equal(gh.Overrides.Env, []string{"GITHUB_TOOLSETS=repos,issues", "GITHUB_HOST=github.example.test", "GITHUB_PERSONAL_ACCESS_TOKEN"}) {
		t.Errorf("github: env %q", gh.Overrides.Env)
	}
	r = resolved(t, c, gh, map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "t"})
	// The github built-in allows uploads. and raw.githubusercontent.com
	// too; the sandbox allows only api.github.com.
	if !slices.Equal(r.Policy.AllowHosts, []string{"api.github.com:443", "api.github.com"}) || r.Policy.Net != policy.NetEgress {
		t.Errorf("github: hosts %q net %s", r.Policy.AllowHosts, r.Policy.Net)
	}

	local, _ := c.Server("local")
	if local.Cwd != ws+"/tools" || local.Command[1] != ws+"/tools/server.js" || local.Limits.Sandboxed {
		t.Errorf("local: cwd %q command %q", local.Cwd, local.Command)
	}
}

func TestSampleCursor(t *testing.T) {
	t.Setenv("SHOP_DB_PASSWORD", "pw")
	c, err := Load("testdata/cursor-mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(c); !slices.Equal(got, []string{"brave-search", "postgres"}) {
		t.Fatalf("servers %q", got)
	}
	brave, _ := c.Server("brave-search")
	pg, _ := c.Server("postgres")
	if !slices.Equal(brave.Overrides.Env, []string{"BRAVE_API_KEY"}) || !slices.Equal(pg.Overrides.Env, []string{"PGPASSWORD=pw"}) {
		t.Errorf("env: brave %q postgres %q", brave.Overrides.Env, pg.Overrides.Env)
	}
	r := resolved(t, c, brave, map[string]string{"BRAVE_API_KEY": "k"})
	if !slices.Contains(r.Policy.Env, "BRAVE_API_KEY") {
		t.Errorf("brave: env %q", r.Policy.Env)
	}
	resolved(t, c, pg, map[string]string{})
}

func TestSampleDaemon(t *testing.T) {
	t.Setenv("GITHUB_PERSONAL_ACCESS_TOKEN", "t")
	c, err := Load("testdata/daemon.json")
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.Abs("testdata")
	if got := userStrings(c.Users); !slices.Equal(got, []string{"ann", "1001"}) {
		t.Errorf("users %q", got)
	}
	gh, _ := c.Server("github")
	if gh.Prestart != 2 || gh.MaxInstances != 8 || gh.Policy != "github" {
		t.Errorf("github: prestart %d max %d policy %q", gh.Prestart, gh.MaxInstances, gh.Policy)
	}
	r := resolved(t, c, gh, map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "t"})
	if r.Policy.Memory != 256*policy.MiB || !slices.Equal(r.Policy.DenyTools, []string{"delete_*"}) || r.Chain[0] != "built-in github" {
		t.Errorf("github: memory %v deny %q chain %q", r.Policy.Memory, r.Policy.DenyTools, r.Chain)
	}
	notes, _ := c.Server("notes")
	if notes.Policy != filepath.Join(dir, "notes-policy.yaml") || len(notes.Users) != 1 || !notes.Users[0].Any {
		t.Errorf("notes: policy %q users %v", notes.Policy, notes.Users)
	}
	if r := resolved(t, c, notes, map[string]string{}); r.Policy.Memory != 128*policy.MiB {
		t.Errorf("notes: memory %v", r.Policy.Memory)
	}
	if tm, _ := c.Server("time"); !tm.Disabled {
		t.Error("time is not disabled")
	}
}

// A resolve error about a setting the entry gives is placed at it.
func TestPlace(t *testing.T) {
	c, _ := parseOne(t, `{"servers": {"s": {"command": "srv",
  "policy": {"extends": "no-such-builtin", "restart": {"mode": "sometimes"}}}}}`)
	s := only(t, c)
	_, err := resolve.Resolve(resolve.Request{Command: s.Command, Policy: s.Policy, Overrides: s.Overrides, Given: s.Given,
		Host: launch.Host{Home: t.TempDir(), WorkDir: t.TempDir(), LookupEnv: os.LookupEnv}})
	var fe *policy.FileError
	if err = s.Place(err); !errors.As(err, &fe) || fe.Pos.Line != 2 || fe.Pos.Col != 25 || !strings.Contains(err.Error(), `no built-in policy "no-such-builtin"`) {
		t.Errorf("error %v, want it at the extends value, 2:25", err)
	}
	s.Policy = ""
	_, err = resolve.Resolve(resolve.Request{Command: s.Command, Overrides: s.Overrides, Given: s.Given,
		Host: launch.Host{Home: t.TempDir(), WorkDir: t.TempDir(), LookupEnv: os.LookupEnv}})
	if err = s.Place(err); !errors.As(err, &fe) || fe.Pos.Line != 2 || fe.Pos.Col != 56 || !strings.Contains(err.Error(), "restart.mode") {
		t.Errorf("error %v, want it at restart.mode, 2:56", err)
	}
}

// Raw changes with what the daemon acts on, not with where the entry is.
func TestRaw(t *testing.T) {
	raw := func(text string) map[string]string {
		c, _ := parseOne(t, text)
		out := map[string]string{}
		for _, s := range c.Servers {
			out[s.Name] = string(s.Raw)
		}
		return out
	}
	base := raw(`{"mcpsandbox": {"users": ["ann"]}, "mcpServers": {"a": {"command": "x", "args": ["1"]}, "b": {"command": "y", "users": ["bob"]}}}`)
	moved := raw(`{"mcpServers": {
    "b": {"users": ["bob"], "command": "y"},
    "a": {"args": ["1"], "command": "x"}},
  "mcpsandbox": {"users": ["ann"]}}`)
	if base["a"] != moved["a"] || base["b"] != moved["b"] {
		t.Errorf("moving entries changed Raw:\n%s\n%s", base["a"], moved["a"])
	}
	changed := raw(`{"mcpsandbox": {"users": ["carl"]}, "mcpServers": {"a": {"command": "x", "args": ["2"]}, "b": {"command": "y", "users": ["bob"]}}}`)
	if base["a"] == changed["a"] {
		t.Error("a new argument left Raw as it was")
	}
	if base["b"] != changed["b"] {
		t.Error("the file's users changed Raw of an entry with users of its own")
	}
	users := raw(`{"mcpsandbox": {"users": ["carl"]}, "mcpServers": {"a": {"command": "x", "args": ["1"]}}}`)
	if base["a"] == users["a"] {
		t.Error("the file's users changed, Raw of an entry without its own did not")
	}
}

func TestEnvFile(t *testing.T) {
	c, _, err := parseIn(t, map[string]string{
		"cfg.json": `{"servers": {"s": {"command": "x", "envFile": "vars"}}}`,
		"vars":     "# comment\n\nA=plain value # comment\nexport B='single #quoted'\nC=\"double\\n\\\"q\\\"\"\r\n  D = spaced \nE=\n",
	}, "cfg.json")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A=plain value", "B=single #quoted", "C=double\n\"q\"", "D=spaced", "E="}
	if got := only(t, c).Overrides.Env; !slices.Equal(got, want) {
		t.Errorf("env %q, want %q", got, want)
	}
}
