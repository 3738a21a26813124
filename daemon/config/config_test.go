package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// parseIn writes files (name → text) into a new directory and parses the
// configuration cfg.json (or the name given) there.
func parseIn(t *testing.T, files map[string]string, name string) (*Config, string, error) {
	t.Helper()
	dir := t.TempDir()
	for n, text := range files {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, name)
	c, err := Load(path)
	return c, dir, err
}

func parseOne(t *testing.T, text string) (*Config, string) {
	t.Helper()
	c, dir, err := parseIn(t, map[string]string{"cfg.json": text}, "cfg.json")
	if err != nil {
		t.Fatal(err)
	}
	return c, dir
}

func only(t *testing.T, c *Config) Server {
	t.Helper()
	if len(c.Servers) != 1 {
		t.Fatalf("%d servers, want 1", len(c.Servers))
	}
	return c.Servers[0]
}

// Comments anywhere (before the first brace too) and trailing commas, as
// VS Code writes mcp.json.
func TestJSONWithComments(t *testing.T) {
	c, _ := parseOne(t, "// servers for the daemon\n{\n  /* one */ \"mcpServers\": {\"a\": {\"command\": \"npx\", \"args\": [\"-y\", \"x\",],},},\n}\n// the end\n")
	if s := only(t, c); s.Name != "a" || !slices.Equal(s.Command, []string{"npx", "-y", "x"}) {
		t.Fatalf("server %+v", s)
	}
}

// A Claude Desktop (and Cursor) entry: command, args, env.
func TestClaudeDesktopEntry(t *testing.T) {
	c, dir := parseOne(t, `{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_x", "PORT": 8080}
    }
  }
}`)
	s := only(t, c)
	if c.File != filepath.Join(dir, "cfg.json") {
		t.Errorf("file %q", c.File)
	}
	if s.Name != "github" || s.Pos != (policy.Pos{File: filepath.Join(dir, "cfg.json"), Line: 3, Col: 5}) {
		t.Errorf("name %q at %v", s.Name, s.Pos)
	}
	if !slices.Equal(s.Command, []string{"npx", "-y", "@modelcontextprotocol/server-github"}) {
		t.Errorf("command %q", s.Command)
	}
	if !slices.Equal(s.Overrides.Env, []string{"GITHUB_PERSONAL_ACCESS_TOKEN=ghp_x", "PORT=8080"}) || !slices.Equal(s.Given, []string{"Env"}) {
		t.Errorf("env %q given %q", s.Overrides.Env, s.Given)
	}
	if s.Cwd != "" || s.Policy != "" || s.Prestart != 0 || s.MaxInstances != DefaultMaxInstances || s.Disabled || len(s.Users) != 0 {
		t.Errorf("defaults: %+v", s)
	}
	if got, ok := c.Server("github"); !ok || got.Name != "github" {
		t.Error("Server(github) not found")
	}
	if _, ok := c.Server("gitlab"); ok {
		t.Error("Server(gitlab) found")
	}
}

// A VS Code mcp.json: comments, trailing commas, tabs, inputs, type,
// cwd, envFile; http servers and dev mode are left aside with a warning.
func TestVSCodeFile(t *testing.T) {
	c, dir, err := parseIn(t, map[string]string{
		"proj/.vscode/mcp.json": "{\n\t// mine\n\t\"inputs\": [{\"type\": \"promptString\", \"id\": \"k\", \"description\": \"key\"}],\n" +
			"\t\"servers\": {\n" +
			"\t\t\"local\": {\"type\": \"stdio\", \"command\": \"node\", \"args\": [\"server.js\",], \"cwd\": \"tools\", \"envFile\": \"../.env\", \"env\": {\"B\": \"2\"}, \"dev\": {\"watch\": \"*.js\"}},\n" +
			"\t\t/* remote */ \"docs\": {\"type\": \"http\", \"url\": \"https://docs.example.test/mcp\"},\n" +
			"\t\t\"sse\": {\"type\": \"sse\", \"url\": \"https://sse.example.test/\"},\n" +
			"\t\t\"cursor-remote\": {\"url\": \"https://c.example.test/mcp\", \"headers\": {\"A\": \"b\"}},\n" +
			"\t},\n}\n",
		"proj/.env": "A=1\nB=from-file\n",
	}, "proj/.vscode/mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	s := only(t, c)
	proj := filepath.Join(dir, "proj")
	if s.Cwd != filepath.Join(proj, ".vscode", "tools") {
		t.Errorf("cwd %q: a relative cwd is relative to the file's directory", s.Cwd)
	}
	if !slices.Equal(s.Overrides.Env, []string{"A=1", "B=2"}) {
		t.Errorf("env %q: env wins over envFile", s.Overrides.Env)
	}
	file := filepath.Join(proj, ".vscode", "mcp.json")
	want := []string{
		file + ":5:130: dev (VS Code's development mode: restart on change, debugger) is not the daemon's: ignored",
		file + ":6:16: server \"docs\" is an http server, which the daemon does not run (mcpsandbox runs stdio servers): skipped",
		file + ":7:3: server \"sse\" is an sse server, which the daemon does not run (mcpsandbox runs stdio servers): skipped",
		file + ":8:3: server \"cursor-remote\" is an http server, which the daemon does not run (mcpsandbox runs stdio servers): skipped",
	}
	if !slices.Equal(c.Warnings, want) {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(c.Warnings, "\n"), strings.Join(want, "\n"))
	}
}

// In a workspace's .vscode/mcp.json the server starts in the workspace,
// as VS Code starts it, and ${workspaceFolder} is that folder.
func TestWorkspaceFolder(t *testing.T) {
	c, dir, err := parseIn(t, map[string]string{
		"ws/.vscode/mcp.json": `{"servers": {"s": {"command": "node", "args": ["${workspaceFolder}/s.js", "${workspaceFolderBasename}", "a${/}b${pathSeparator}c"]}}}`,
	}, "ws/.vscode/mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	s := only(t, c)
	ws := filepath.Join(dir, "ws")
	if s.Cwd != ws || !slices.Equal(s.Command, []string{"node", ws + "/s.js", "ws", "a/b/c"}) {
		t.Errorf("cwd %q command %q", s.Cwd, s.Command)
	}
}

// mcpsandbox's own keys in an entry, and the file's default users.
func TestExtensions(t *testing.T) {
	c, dir := parseOne(t, `{
  "mcpsandbox": {"users": ["ann", 1001, "1002"]},
  "mcpServers": {
    "a": {"command": "a", "policy": "./pol/a.yaml", "prestart": 2, "max-instances": 4, "users": ["*"]},
    "b": {"command": "b", "policy": "npx", "disabled": true},
    "c": {"command": "c", "policy": {"extends": "../shared/base.yaml", "limits": {"memory": "256MiB"}, "mcp": {"deny-tools": ["delete_*"]}}},
    "d": {"command": "d", "policy": {"health": {"ping-interval": "0s"}}, "env": {"X": "1"}, "max-instances": 1, "prestart": 1}
  }
}`)
	get := func(name string) Server {
		s, ok := c.Server(name)
		if !ok {
			t.Fatalf("no server %s", name)
		}
		return *s
	}
	if want := []User{{Name: "ann", UID: -1}, {UID: 1001}, {UID: 1002}}; !reflect.DeepEqual(c.Users, want) {
		t.Errorf("file's users %+v", c.Users)
	}
	a := get("a")
	if a.Policy != filepath.Join(dir, "pol", "a.yaml") || a.Prestart != 2 || a.MaxInstances != 4 || !reflect.DeepEqual(a.Users, []User{{UID: -1, Any: true}}) {
		t.Errorf("a: policy %q prestart %d max %d users %+v", a.Policy, a.Prestart, a.MaxInstances, a.Users)
	}
	if got := c.AllowedUsers(&a); len(got) != 1 || !got[0].Any {
		t.Errorf("a allows %v, want its own *", got)
	}
	b := get("b")
	if b.Policy != "npx" || !b.Disabled || len(b.Given) != 0 {
		t.Errorf("b: policy %q disabled %v given %q", b.Policy, b.Disabled, b.Given)
	}
	if got := c.AllowedUsers(&b); !reflect.DeepEqual(got, c.Users) {
		t.Errorf("b allows %v, want the file's", got)
	}
	cs := get("c")
	if cs.Policy != filepath.Join(filepath.Dir(dir), "shared", "base.yaml") || cs.Overrides.Memory != 256*policy.MiB ||
		!slices.Equal(cs.Overrides.DenyTools, []string{"delete_*"}) || !slices.Equal(cs.Given, []string{"Memory", "DenyTools"}) {
		t.Errorf("c: policy %q memory %v deny %q given %q", cs.Policy, cs.Overrides.Memory, cs.Overrides.DenyTools, cs.Given)
	}
	if pos := cs.Origin["Memory"]; pos.Line != 6 {
		t.Errorf("c: memory at %v", pos)
	}
	d := get("d")
	if d.Policy != "" || !slices.Equal(d.Given, []string{"Env", "PingInterval"}) || d.Overrides.PingInterval != 0 || d.Prestart != 1 || d.MaxInstances != 1 {
		t.Errorf("d: policy %q given %q", d.Policy, d.Given)
	}
}

// Both maps may be in one file; the servers come in file order.
func TestBothMapsInFileOrder(t *testing.T) {
	c, _ := parseOne(t, `{"servers": {"v1": {"command": "a"}, "v2": {"command": "b"}}, "mcpServers": {"c1": {"command": "c"}}}`)
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"v1", "v2", "c1"}) {
		t.Errorf("servers %q", names)
	}
}

func TestUsers(t *testing.T) {
	for _, tc := range []struct {
		u          User
		str        string
		uid        int
		name       string
		allows     bool
		otherAllow bool // uid 4242, no name
	}{
		{User{Name: "ann", UID: -1}, "ann", 1000, "ann", true, false},
		{User{Name: "ann", UID: -1}, "ann", 1000, "bob", false, false},
		{User{UID: 1000}, "1000", 1000, "", true, false},
		{User{UID: 0}, "0", 1000, "ann", false, false},
		{User{UID: -1, Any: true}, "*", 1000, "ann", true, true},
	} {
		if tc.u.String() != tc.str || tc.u.Allows(tc.uid, tc.name) != tc.allows || tc.u.Allows(4242, "") != tc.otherAllow {
			t.Errorf("%+v: String %q Allows(%d, %q) %v", tc.u, tc.u.String(), tc.uid, tc.name, tc.u.Allows(tc.uid, tc.name))
		}
	}
}

// VS Code's and Cursor's variables, as the daemon gives them.
func TestVariables(t *testing.T) {
	t.Setenv("HOME", "/home/ann")
	t.Setenv("MY_TOKEN", "t0k")
	t.Setenv("SAME", "ignored")
	c, _ := parseOne(t, `{"mcpServers": {"s": {
  "command": "${userHome}/bin/srv",
  "args": ["--token=${env:MY_TOKEN}", "~/x"],
  "env": {"SAME": "${env:SAME}", "RENAMED": "${env:MY_TOKEN}", "GONE": null}
}}}`)
	s := only(t, c)
	if !slices.Equal(s.Command, []string{"/home/ann/bin/srv", "--token=t0k", "~/x"}) {
		t.Errorf("command %q (~ is a path's, not an argument's)", s.Command)
	}
	// ${env:NAME} as NAME's value passes the daemon's NAME at each start
	// (as run --env NAME does); another name's value is read now.
	if !slices.Equal(s.Overrides.Env, []string{"SAME", "RENAMED=t0k"}) {
		t.Errorf("env %q", s.Overrides.Env)
	}
	if len(s.Limits.Unset) != 1 || s.Limits.Unset[0].Value != "GONE" || s.Limits.Unset[0].Pos.Line != 4 {
		t.Errorf("unset %+v", s.Limits.Unset)
	}
}

// Each broken file is refused at FILE:LINE:COL with what to do.
func TestErrors(t *testing.T) {
	t.Setenv("HOME", "/home/ann")
	for _, tc := range []struct {
		name  string
		files map[string]string // cfg.json unless at names another
		at    string            // FILE:LINE:COL, FILE relative to the directory
		want  []string
	}{
		{"empty file", map[string]string{"cfg.json": ""}, "cfg.json:1:1", []string{"the file is empty", `"mcpServers"`}},
		{"not an object", map[string]string{"cfg.json": `["x"]`}, "cfg.json:1:1", []string{"a JSON object, not a list"}},
		{"syntax", map[string]string{"cfg.json": "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}"}, "cfg.json:1:1", []string{"JSON:"}},
		{"neither map", map[string]string{"cfg.json": `{"inputs": []}`}, "cfg.json:1:2", []string{"neither mcpServers nor servers"}},
		{"unknown key after comments", map[string]string{"cfg.json": "// my servers\n/* all of them */ {\"servers\": {\"a\": {\"command\": \"x\",},},\n  \"mcpServer\": {}}"}, "cfg.json:3:3", []string{`unknown key "mcpServer"`}},
		{"unknown top key", map[string]string{"cfg.json": `{"mcpServer": {}}`}, "cfg.json:1:2", []string{`unknown key "mcpServer"`, "did you mean mcpServers?"}},
		{"unknown top key, no near one", map[string]string{"cfg.json": `{"zzzzzzzz": {}}`}, "cfg.json:1:2", []string{"the keys of the top of the file are mcpServers, servers, inputs, sandbox, mcpsandbox"}},
		{"map not an object", map[string]string{"cfg.json": `{"servers": ["a"]}`}, "cfg.json:1:13", []string{"servers must be an object of named servers, not a list"}},
		{"entry not an object", map[string]string{"cfg.json": `{"servers": {"a": "npx"}}`}, "cfg.json:1:19", []string{`server "a" must be an object, not a string`}},
		{"bad name", map[string]string{"cfg.json": `{"servers": {"my server": {"command": "x"}}}`}, "cfg.json:1:14", []string{`server name "my server"`, "letters, digits"}},
		{"duplicate across maps", map[string]string{"cfg.json": "{\"servers\": {\"a\": {\"command\": \"x\"}},\n \"mcpServers\": {\"a\": {\"command\": \"y\"}}}"}, "cfg.json:2:17",
			[]string{`server "a" is defined twice (first at `, "cfg.json:1:14)", "rename or delete one"}},
		{"duplicate in a map", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x"}, "a": {"command": "y"}}}`}, "cfg.json:1:37", []string{`"a" is given twice in this object`, "keep one"}},
		{"duplicate key", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "command": "y"}}}`}, "cfg.json:1:36", []string{`"command" is given twice`}},
		{"missing command", map[string]string{"cfg.json": `{"servers": {"a": {"args": ["x"]}}}`}, "cfg.json:1:20", []string{`server "a" has no command`, `"command": "npx"`}},
		{"empty command", map[string]string{"cfg.json": `{"servers": {"a": {"command": " "}}}`}, "cfg.json:1:31", []string{"command is empty"}},
		{"command a list", map[string]string{"cfg.json": `{"servers": {"a": {"command": ["npx", "x"]}}}`}, "cfg.json:1:31", []string{"command must be a string, not a list", "arguments in args"}},
		{"args a string", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "args": "-y"}}}`}, "cfg.json:1:44", []string{"args must be a list of strings, not a string"}},
		{"arg a number", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "args": [1]}}}`}, "cfg.json:1:45", []string{"args items must be strings, not a number", "quote it"}},
		{"unknown entry key", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "maxInstances": 3}}}`}, "cfg.json:1:36", []string{`unknown key "maxInstances" in server "a"`, "did you mean max-instances?"}},
		{"unknown entry key, no near one", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "zzzzzzzz": 3}}}`}, "cfg.json:1:36", []string{"the keys of a server are type, command"}},
		{"bad type", map[string]string{"cfg.json": `{"servers": {"a": {"type": "tcp", "command": "x"}}}`}, "cfg.json:1:28", []string{`type must be "stdio", "http" or "sse"`}},
		{"url on stdio", map[string]string{"cfg.json": `{"servers": {"a": {"type": "stdio", "command": "x", "url": "https://x.test"}}}`}, "cfg.json:1:53", []string{"url is for an http server"}},
		{"env not an object", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "env": ["A=1"]}}}`}, "cfg.json:1:43", []string{"env must be an object of variable names and values, not a list"}},
		{"env bad name", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "env": {"A-B": "1"}}}}`}, "cfg.json:1:44", []string{`env "A-B" is no variable name`}},
		{"env bool", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "env": {"A": true}}}}`}, "cfg.json:1:49", []string{"env A must be a string, a number or null, not true or false", "quote it"}},
		{"env unset", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "env": {"A": "${env:NOT_SET_ANYWHERE}"}}}}`}, "cfg.json:1:49",
			[]string{"${env:NOT_SET_ANYWHERE}: NOT_SET_ANYWHERE is not set in the daemon's environment", "Environment="}},
		{"input variable", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "env": {"K": "${input:api-key}"}}}}`}, "cfg.json:1:49",
			[]string{"${input:api-key}: VS Code asks for this value", "${env:NAME}"}},
		{"unknown variable", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "args": ["${TOKEN}"]}}}`}, "cfg.json:1:45",
			[]string{"unknown variable ${TOKEN}", "write ${env:TOKEN}"}},
		{"unclosed variable", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "args": ["${env:A"]}}}`}, "cfg.json:1:45", []string{"without a closing }"}},
		{"no workspace", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "cwd": "${workspaceFolder}"}}}`}, "cfg.json:1:43",
			[]string{"${workspaceFolder} is the folder of the workspace", "write the path"}},
		{"envFile missing", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "envFile": ".env"}}}`}, "cfg.json:1:47", []string{"envFile: no such file", ".env"}},
		{"envFile bad line", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "envFile": "e/vars"}}}`, "e/vars": "# ok\nA=1\n  export B C\n"}, "e/vars:3:10",
			[]string{"a line of an env file is NAME=VALUE"}},
		{"envFile bad name", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "envFile": "vars"}}}`, "vars": "1A=x\n"}, "vars:1:1", []string{`"1A" is no variable name`}},
		{"envFile open quote", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "envFile": "vars"}}}`, "vars": "A = \"x\n"}, "vars:1:5", []string{`A: the value's " is not closed`}},
		{"env both in policy and env", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "env": {"A": "1"}, "policy": {"env": {"pass": ["A"]}}}}}`}, "cfg.json:1:44",
			[]string{"A is set both by the server's env and by its policy's env"}},
		{"prestart negative", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "prestart": -1}}}`}, "cfg.json:1:48", []string{"prestart must be a whole number from 0, not -1"}},
		{"prestart a string", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "prestart": "2"}}}`}, "cfg.json:1:48", []string{"prestart must be a whole number"}},
		{"max-instances zero", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "max-instances": 0}}}`}, "cfg.json:1:53", []string{"max-instances must be a whole number from 1, not 0"}},
		{"prestart over max", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "prestart": 3, "max-instances": 2}}}`}, "cfg.json:1:48",
			[]string{"prestart 3 exceeds max-instances 2", "warm instances count"}},
		{"users not a list", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "users": "ann"}}}`}, "cfg.json:1:45", []string{"users must be a list of user names, uids"}},
		{"bad user", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "users": ["ann smith"]}}}`}, "cfg.json:1:46", []string{`"ann smith" is no user name`}},
		{"bad uid", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "users": [-5]}}}`}, "cfg.json:1:46", []string{"is no uid"}},
		{"user a bool", map[string]string{"cfg.json": `{"mcpsandbox": {"users": [true]}, "servers": {}}`}, "cfg.json:1:27", []string{"a user is a user name, a uid or \"*\", not true or false"}},
		{"unknown own key", map[string]string{"cfg.json": `{"mcpsandbox": {"user": []}, "servers": {}}`}, "cfg.json:1:17", []string{`unknown key "user" in mcpsandbox`, "did you mean users?"}},
		{"empty policy", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "policy": ""}}}`}, "cfg.json:1:46", []string{"policy is empty"}},
		{"policy a list", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "policy": ["npx"]}}}`}, "cfg.json:1:46", []string{"policy must be a policy file, a built-in policy's name or an object"}},
		{"inline policy unknown key", map[string]string{"cfg.json": "{\"servers\": {\"a\": {\"command\": \"x\",\n  \"policy\": {\"limits\": {\"memroy\": \"1GiB\"}}}}}"}, "cfg.json:2:25",
			[]string{`unknown key "memroy" in limits`, "did you mean memory?"}},
		{"inline policy bad value", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "policy": {"limits": {"pids": "many"}}}}}`}, "cfg.json:1:66",
			[]string{`limits.pids "many": must be a whole number`}},
		{"inline policy variable", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "policy": {"filesystem": {"ro": ["${HOME}"]}}}}}`}, "cfg.json:1:69",
			[]string{"variables are not expanded in an inline policy"}},
		{"disabled not a bool", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "disabled": "yes"}}}`}, "cfg.json:1:48", []string{"disabled must be true or false"}},
		{"sandboxEnabled not a bool", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "sandboxEnabled": 1}}}`}, "cfg.json:1:54", []string{"sandboxEnabled must be true or false"}},
		{"sandbox without sandboxEnabled", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "sandbox": {}}}}`}, "cfg.json:1:36",
			[]string{`sandbox is in force only with "sandboxEnabled": true`, "confines the server either way"}},
		{"sandbox unknown section", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "sandboxEnabled": true, "sandbox": {"filesytem": {}}}}}`}, "cfg.json:1:72",
			[]string{`unknown key "filesytem" in sandbox`, "did you mean filesystem?"}},
		{"sandbox unmapped setting", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "sandboxEnabled": true, "sandbox": {"network": {"allowLocalBinding": true}}}}}`}, "cfg.json:1:84",
			[]string{`unknown key "allowLocalBinding" in sandbox.network: mcpsandbox maps only VS Code's sandbox settings`, "allowedDomains, deniedDomains"}},
		{"sandbox list not a list", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "sandboxEnabled": true, "sandbox": {"filesystem": {"allowWrite": "/tmp"}}}}}`}, "cfg.json:1:101",
			[]string{"sandbox.filesystem.allowWrite must be a list of strings"}},
		{"bad domain", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "sandboxEnabled": true, "sandbox": {"network": {"allowedDomains": ["exa mple.com"]}}}}}`}, "cfg.json:1:103",
			[]string{`sandbox.network.allowedDomains: is no host`, "HOST[:PORT]"}},
		{"denyRead of the system", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "sandboxEnabled": true, "sandbox": {"filesystem": {"denyRead": ["/usr/share/secret"]}}}}}`}, "cfg.json:1:100",
			[]string{"denyRead /usr/share/secret: every sandbox shows its server /usr"}},
		{"denyRead around the system", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "sandboxEnabled": true, "sandbox": {"filesystem": {"denyRead": ["/etc"]}}}}}`}, "cfg.json:1:100",
			[]string{"denyRead /etc: every sandbox shows its server /etc/ld.so.cache"}},
		{"denyRead within allowWrite", map[string]string{"cfg.json": "{\"servers\": {\"a\": {\"command\": \"x\", \"sandboxEnabled\": true, \"sandbox\": {\"filesystem\": {\n \"allowWrite\": [\"/srv/p\"], \"denyRead\": [\"/srv/p/.env\"]}}}}}"}, "cfg.json:2:41",
			[]string{"denyRead /srv/p/.env: the server's policy grants /srv/p", "grant the directories beside"}},
		{"denyRead around allowWrite", map[string]string{"cfg.json": "{\"servers\": {\"a\": {\"command\": \"x\", \"sandboxEnabled\": true, \"sandbox\": {\"filesystem\": {\n \"allowWrite\": [\"/srv/p\"], \"denyRead\": [\"/srv\"]}}}}}"}, "cfg.json:2:41",
			[]string{"denyRead /srv: the server's policy grants /srv/p"}},
		{"denyWrite that does not exist", map[string]string{"cfg.json": "{\"servers\": {\"a\": {\"command\": \"x\", \"sandboxEnabled\": true, \"sandbox\": {\"filesystem\": {\n \"allowWrite\": [\"/\"], \"denyWrite\": [\"/no/such/path\"]}}}}}"}, "cfg.json:2:37",
			[]string{"denyWrite /no/such/path does not exist", "create it"}},
		{"sandbox and host network", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "sandboxEnabled": true, "policy": {"network": {"mode": "host"}}}}}`}, "cfg.json:1:83",
			[]string{"network.mode host reaches every host, but sandboxEnabled allows only sandbox.network.allowedDomains"}},
		{"allowedDomains and no network", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "sandboxEnabled": true, "policy": {"network": {"mode": "none"}}, "sandbox": {"network": {"allowedDomains": ["a.example.test"]}}}}}`},
			"cfg.json:1:83", []string{"network.mode none contradicts sandbox.network.allowedDomains"}},
		{"sandbox and unconfined", map[string]string{"cfg.json": `{"servers": {"a": {"command": "x", "sandboxEnabled": true, "policy": {"unconfined": true}}}}`}, "cfg.json:1:71",
			[]string{"unconfined: true runs the server without the sandbox"}},
		{"root sandbox not an object", map[string]string{"cfg.json": `{"sandbox": [], "servers": {"a": {"command": "x", "sandboxEnabled": true}}}`}, "cfg.json:1:13", []string{"sandbox must be an object, not a list"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, dir, err := parseIn(t, tc.files, "cfg.json")
			var fe *policy.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v, want a FileError", err)
			}
			if got := fe.Pos.String(); got != filepath.Join(dir, tc.at) {
				t.Errorf("at %s, want %s (%v)", got, tc.at, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q\nlacks %q", err, w)
				}
			}
		})
	}
}

func TestNoSuchFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.json"))
	if err == nil || !strings.Contains(err.Error(), "no such configuration file") || !strings.Contains(err.Error(), "--config FILE") {
		t.Errorf("error %v", err)
	}
}

// The file's sandbox is checked although no server is sandboxed, and a
// null sandbox is none.
func TestRootSandboxIsChecked(t *testing.T) {
	_, dir, err := parseIn(t, map[string]string{"cfg.json": `{"sandbox": {"network": {"allowedDomain": []}}, "servers": {"a": {"command": "x", "sandbox": null}}}`}, "cfg.json")
	if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, "cfg.json")+":1:26: unknown key \"allowedDomain\" in sandbox.network") {
		t.Errorf("error %v", err)
	}
	c, _ := parseOne(t, `{"servers": {"a": {"command": "x", "sandbox": null}}}`)
	if only(t, c).Limits.Sandboxed {
		t.Error("sandboxed")
	}
}
