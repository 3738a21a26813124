package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/policies"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// explained is explain's output, by section heading.
type explained map[string][]string

func explain(t *testing.T, args ...string) explained {
	t.Helper()
	stdout, stderr, code := runCLI(t, append([]string{"policy", "explain"}, args...)...)
	if code != exitOK || stderr != "" {
		t.Fatalf("policy explain %q: exit %d, stderr %q", args, code, stderr)
	}
	out := explained{}
	head := ""
	for _, line := range strings.Split(stdout, "\n") {
		switch {
		case line == "":
		case !strings.HasPrefix(line, " "):
			head = line
		default:
			out[head] = append(out[head], strings.TrimSpace(line))
		}
	}
	return out
}

func (e explained) text(section string) string { return strings.Join(e[section], "\n") }

// grants are the mounts of host files explain lists: kind → paths.
func (e explained) grants() map[string][]string {
	g := map[string][]string{}
	for _, line := range e["Mounts"] {
		if f := strings.Fields(line); len(f) > 1 && (f[0] == "ro" || f[0] == "rw" || f[0] == "tmpfs") {
			g[f[0]] = append(g[f[0]], f[1])
		}
	}
	return g
}

// own are the sandbox's own mounts explain lists ("PATH: what").
func (e explained) own() []string {
	var paths []string
	for _, line := range e["Mounts"] {
		if path, _, ok := strings.Cut(line, ": "); ok && strings.HasPrefix(path, "/") {
			paths = append(paths, strings.TrimSuffix(path, " (HOME)"))
		}
	}
	return paths
}

// grantedAs is the reason explain gives for the kind grant of path.
func (e explained) grantedAs(kind, path string) (string, bool) {
	for _, line := range e["Mounts"] {
		if f := strings.Fields(line); len(f) > 2 && f[0] == kind && f[1] == path {
			return strings.Join(f[2:], " "), true
		}
	}
	return "", false
}

// project is a Python project with a script, as a user has it.
func project(t *testing.T) (dir, script string) {
	dir = t.TempDir()
	writeFile(t, dir, "pyproject.toml", "[project]\nname = \"demo\"\n")
	return dir, writeFile(t, dir, "server.py", "print('hi')\n")
}

func TestExplainSaysWhichPolicyAndWhy(t *testing.T) {
	served := t.TempDir()
	proj, script := project(t)
	cases := []struct {
		line   []string
		policy string
		why    string
		check  func(t *testing.T, e explained)
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory"}, "memory", "npm package @modelcontextprotocol/server-memory", func(t *testing.T, e explained) {
			if !strings.Contains(e.text("Policy"), "extends: built-in npx → built-in default") {
				t.Errorf("extends chain missing:\n%s", e.text("Policy"))
			}
			if !strings.Contains(e.text("Server"), "named by: npm_config_cache, MEMORY_FILE_PATH") {
				t.Errorf("state directory's variables missing:\n%s", e.text("Server"))
			}
		}},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", served}, "filesystem", "server-filesystem", func(t *testing.T, e explained) {
			if why, ok := e.grantedAs("rw", served); !ok || !strings.Contains(why, "argument") {
				t.Errorf("the served directory is not a read-write grant from the argument:\n%s", e.text("Mounts"))
			}
		}},
		{[]string{"npx", "-c", "x"}, "default", "npx -c runs a shell command", nil},
		{[]string{"python3", script}, "python", "the program is python3", func(t *testing.T, e explained) {
			if why, ok := e.grantedAs("ro", proj); !ok || !strings.Contains(why, "${PROJECT}") {
				t.Errorf("the project is not a read-only grant of ${PROJECT}:\n%s", e.text("Mounts"))
			}
			if rt := launch.Read([]string{"python3", script}, nil, launch.FromProcess()).Runtime; rt.Shim != "" {
				want := fmt.Sprintf("python3 → %s (%s shim)", rt.Exe, rt.Via)
				if !slices.Contains(e["Command"], want) {
					t.Errorf("Command lacks %q:\n%s", want, e.text("Command"))
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.policy, func(t *testing.T) {
			e := explain(t, append([]string{"--"}, c.line...)...)
			if got := e.text("Policy"); !strings.HasPrefix(got, "built-in "+c.policy+", chosen by the command:") || !strings.Contains(got, c.why) {
				t.Errorf("%q: Policy section\n%s\nwant built-in %s and why (%q)", c.line, got, c.policy, c.why)
			}
			if c.check != nil {
				c.check(t, e)
			}
		})
	}
}

func TestExplainShowsWhatTheCommandLineSets(t *testing.T) {
	t.Setenv("EXPLAIN_PASSED", "value-never-shown")
	os.Unsetenv("EXPLAIN_UNSET")
	ro := t.TempDir()
	e := explain(t, "--memory", "300MiB", "--ro", ro, "--env", "EXPLAIN_PASSED", "--env", "EXPLAIN_UNSET",
		"--env", "API_TOKEN=hunter2", "--env", "MODE=fast", "--", "sh", "-c", "true")
	if !slices.Contains(e["Limits"], "memory               300MiB     (--memory)") {
		t.Errorf("Limits do not show --memory 300MiB:\n%s", e.text("Limits"))
	}
	if why, ok := e.grantedAs("ro", ro); !ok || why != "(--ro)" {
		t.Errorf("--ro %s not listed as given by the flag:\n%s", ro, e.text("Mounts"))
	}
	env := e.text("Environment")
	for _, want := range []string{"EXPLAIN_PASSED from your environment", "EXPLAIN_UNSET from your environment (not set now", "API_TOKEN=***", "MODE=fast", "HOME=/sandbox"} {
		if !strings.Contains(env, want) {
			t.Errorf("Environment lacks %q:\n%s", want, env)
		}
	}
	all, _, _ := runCLI(t, "policy", "explain", "--env", "EXPLAIN_PASSED", "--env", "API_TOKEN=hunter2", "--", "sh")
	for _, secret := range []string{"value-never-shown", "hunter2"} {
		if strings.Contains(all, secret) {
			t.Errorf("explain printed the value %q:\n%s", secret, all)
		}
	}
}

func TestExplainRefusesWhatRunRefuses(t *testing.T) {
	bad := writeFile(t, t.TempDir(), "bad.yaml", "limits:\n  memroy: 1GiB\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", bad, "--", "srv"}, bad + ":2:3: unknown key \"memroy\""},
		{[]string{}, "no server command"},
		{[]string{"--memroy", "1G", "--", "srv"}, "did you mean --memory?"},
	} {
		stdout, stderr, code := runCLI(t, append([]string{"policy", "explain"}, c.args...)...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "help policy") {
			t.Errorf("explain %q: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// Each built-in explains a launch line it is chosen for, with the
// arguments its server cannot start without.
func TestExplainEveryBuiltin(t *testing.T) {
	serverArgs := map[string][]string{"postgres": {"postgresql://db.example.test/shop"}}
	matches, err := policy.Matches(policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	js := writeFile(t, dir, "index.js", "")
	py := writeFile(t, dir, "server.py", "")
	lines := map[string][]string{"default": {"sh", "-c", "true"}}
	for _, m := range matches {
		switch {
		case len(m.NPM) > 0:
			lines[m.Policy] = append([]string{"npx", "-y", m.NPM[0]}, serverArgs[m.Policy]...)
		case len(m.PyPI) > 0:
			lines[m.Policy] = []string{"uvx", m.PyPI[0]}
		case slices.Contains(m.Programs, "node"):
			lines[m.Policy] = []string{"node", js}
		case slices.Contains(m.Programs, "python3"):
			lines[m.Policy] = []string{"python3", py}
		case slices.Contains(m.Programs, "npx"):
			lines[m.Policy] = []string{"npx", "-y", "some-unnamed-mcp-server"}
		case slices.Contains(m.Programs, "uvx"):
			lines[m.Policy] = []string{"uvx", "some-unnamed-mcp-server"}
		case len(m.Programs) > 0:
			lines[m.Policy] = []string{m.Programs[0]}
		}
	}
	for _, name := range builtinNames() {
		line, ok := lines[name]
		if !ok {
			t.Errorf("built-in %s: no launch line selects it", name)
			continue
		}
		e := explain(t, append([]string{"--"}, line...)...)
		if got := e.text("Policy"); !strings.HasPrefix(got, "built-in "+name+",") {
			t.Errorf("%q: explained as\n%s\nwant the built-in %s", line, got, name)
		}
		for _, s := range []string{"Command", "Server", "Mounts", "Environment", "Network", "Limits", "Seccomp", "Landlock", "User", "MCP rules", "Audit log", "Health", "Restart"} {
			if len(e[s]) == 0 {
				t.Errorf("%q: no %s section", line, s)
			}
		}
	}
}

// What explain lists is what run mounts: a server that records its mount
// points (and whether each is read-only) shows every grant explain names.
func TestExplainAgreesWithRun(t *testing.T) {
	requireConfinement(t)
	proj, _ := project(t)
	script := writeFile(t, proj, "mounts.py", `import os, sys
with open(os.path.join(sys.argv[1], "mounts"), "w") as out:
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        out.write(f[4] + " " + f[5].split(",")[0] + "\n")
`)
	ro, rw := t.TempDir(), t.TempDir()
	// Readable (and rw writable) by the server's own uid, as a user's are.
	for dir, mode := range map[string]os.FileMode{proj: 0o755, ro: 0o755, rw: 0o777} {
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
	}
	flags := []string{"--ro", ro, "--rw", rw, "--tmpfs", "/opt/explain-test", "--"}
	line := []string{"python3", script, rw}
	e := explain(t, append(flags, line...)...)
	want := e.grants()

	stderr, err := runToEnd(t, append(flags, line...)...)
	data, rerr := os.ReadFile(filepath.Join(rw, "mounts"))
	if rerr != nil {
		t.Fatalf("the server wrote no mounts (%v, run: %v); stderr:\n%s", rerr, err, stderr)
	}
	inside := map[string]string{} // mount point → ro or rw
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			inside[f[0]] = f[1]
		}
	}
	// The sandbox's own mounts too: explain shows what sandbox.Describe says.
	want["ro"] = append(want["ro"], "/", "/usr", "/dev", "/sys")
	want["rw"] = append(want["rw"], "/proc", "/tmp", "/dev/shm", "/sandbox")
	if got := e.own(); !slices.Equal(got, []string{"/", "/usr", "/dev", "/proc", "/dev/shm", "/tmp", "/sandbox", "/sys"}) {
		t.Errorf("explain lists the sandbox's own mounts %q", got)
	}
	if !slices.Contains(want["ro"], proj) || !slices.Contains(want["ro"], ro) || !slices.Contains(want["rw"], rw) || len(want["tmpfs"]) != 1 {
		t.Fatalf("explain listed %v; want the project and --ro read-only, --rw and the tmpfs", want)
	}
	for kind, paths := range want {
		for _, p := range paths {
			mode, ok := inside[p]
			switch {
			case !ok:
				t.Errorf("explain lists %s %s, which is no mount inside", kind, p)
			case kind == "ro" && mode != "ro", kind != "ro" && mode != "rw":
				t.Errorf("explain lists %s %s, mounted %s inside", kind, p, mode)
			}
		}
	}
}

// The settings blocks share one column layout, and no line of them is
// wider than a manual page's, however long the values.
func TestExplainSettingsFitTheirColumns(t *testing.T) {
	stdout, _, code := runCLI(t, "policy", "explain",
		"--allow-tool", "read_*", "--allow-tool", "list_directory_with_sizes", "--allow-tool", "search_files", "--allow-tool", "get_file_info",
		"--deny-resource", "file:///srv/some/rather/deep/directory/*", "--deny-resource", "file:///home/*/.ssh/*",
		"--rate-limit", "write_*=5/1m", "--rate-limit", "60/1m", "--rate-limit", "move_file=1/10s",
		"--max-concurrent-calls", "4", "--audit-log", "/var/log/mcpsandbox/a-rather-long-audit-file-name.jsonl",
		"--audit-mask", "*ssn*", "--memory", "300MiB", "--", "sh")
	if code != exitOK {
		t.Fatalf("explain: exit %d", code)
	}
	valueCol := map[int]bool{}
	section := ""
	for _, line := range strings.Split(stdout, "\n") {
		if line != "" && !strings.HasPrefix(line, " ") {
			section = line
			continue
		}
		if section != "Limits" && section != "MCP rules" && section != "Audit log" || line == "" {
			continue
		}
		if len(line) > cmdline.Width {
			t.Errorf("%s: a line of %d wide:\n%s", section, len(line), line)
		}
		if f := strings.Fields(line); len(f) > 1 && !strings.HasPrefix(line, "   ") {
			valueCol[strings.Index(line[2+len(f[0]):], f[1])+2+len(f[0])] = true
		}
	}
	if len(valueCol) != 1 {
		t.Errorf("the values start at columns %v, want one column:\n%s", valueCol, stdout)
	}
	for _, want := range []string{"list_directory_with_sizes", "file:///home/*/.ssh/*", "move_file=1/10s", "(--rate-limit)", "(--allow-tool)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("explain lost %q:\n%s", want, stdout)
		}
	}
}

// What the sandbox would refuse at the start, explain says, in run's words.
func TestExplainSaysWhatTheStartRefuses(t *testing.T) {
	dir := t.TempDir()
	e := explain(t, "--ro", dir, "--rw", dir, "--", "sh")
	if got := e.text("Start"); !strings.Contains(got, "the start would fail") || !strings.Contains(got, dir+" is given both as --ro and --rw: keep one") {
		t.Errorf("Start section:\n%s\nwant the grant given both ways, named as flags", got)
	}
}

// The network section names the mode and where it came from, and every
// allowed and denied host with who gave it: the built-in, a file at its
// line, a flag.
func TestExplainListsEachHostAndWhoGaveIt(t *testing.T) {
	dir := t.TempDir()
	mine := writeFile(t, dir, "mine.yaml", "extends: github\nnetwork:\n  allow-hosts:\n    - ghe.example.test\n  deny-hosts: [\"uploads.github.com:443\"]\n")
	e := explain(t, "--policy", mine, "--allow-host", "198.51.100.7:5432", "--", "github-mcp-server", "stdio")
	var got []string
	for _, l := range e["Network"] {
		got = append(got, strings.Join(strings.Fields(l), " "))
	}
	for _, want := range []string{
		"egress: a network of its own, reaching only the hosts below (--allow-host)",
		"allow api.github.com 443 (built-in github)",
		"allow raw.githubusercontent.com 443 (built-in github)",
		"allow ghe.example.test 443, 80 (" + mine + ":4)",
		"allow 198.51.100.7 5432 (--allow-host)",
		"deny uploads.github.com 443 (" + mine + ":5)",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("Network lacks %q:\n%s", want, e.text("Network"))
		}
	}
	if n := strings.Count(e.text("Network"), "allow "); n != 5 {
		t.Errorf("%d allow entries, want the built-in's 3, the file's and the flag's:\n%s", n, e.text("Network"))
	}

	e = explain(t, "--policy", mine, "--", "github-mcp-server", "stdio")
	if got := e["Network"][0]; !strings.HasPrefix(got, "egress:") || !strings.HasSuffix(got, "("+mine+":3)") {
		t.Errorf("egress selected by the file's allow-hosts is explained as %q", got)
	}
	e = explain(t, "--net", "host", "--", "npx", "-y", "@modelcontextprotocol/server-slack")
	if got := e.text("Network"); !strings.HasPrefix(got, "host: ") || !strings.Contains(got, "(--net)\nnot in force under host:\nallow slack.com") {
		t.Errorf("--net host over slack:\n%s\nwant host, slack's entry shown out of force", got)
	}
	e = explain(t, "--", "sh")
	if got := e.text("Network"); !strings.HasPrefix(got, "none: ") || strings.Contains(got, "allow") {
		t.Errorf("no network setting:\n%s", got)
	}
}

// What is wrong with the network settings, explain refuses as run would,
// in flags or at the file's line and column.
func TestExplainRefusesWrongNetworkSettings(t *testing.T) {
	bad := writeFile(t, t.TempDir(), "bad.yaml", "network:\n  allow-hosts:\n    - api.example.test\n    - \"api.example.test:https\"\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--net", "host", "--allow-host", "api.example.test", "--", "sh"}, "--net host: contradicts --allow-host, which selects network mode egress"},
		{[]string{"--net", "egress", "--", "sh"}, "--net egress: with no --allow-host reaches nothing"},
		{[]string{"--allow-host", "exa mple.test", "--", "sh"}, `--allow-host "exa mple.test": is no host`},
		{[]string{"--deny-host", "evil.example.test", "--", "sh"}, "--deny-host \"evil.example.test\": only narrows what --allow-host allows"},
		{[]string{"--allow-host", "*", "--resolver", "192.0.2.53:0", "--", "sh"}, `--resolver "192.0.2.53:0": port "0" is not a number`},
		{[]string{"--policy", bad, "--", "sh"}, bad + ":4:7: network.allow-hosts \"api.example.test:https\": is no host"},
		{[]string{"--", "npx", "-y", "@modelcontextprotocol/server-postgres"}, "built-in postgres:"},
	} {
		stdout, stderr, code := runCLI(t, append([]string{"policy", "explain"}, c.args...)...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("explain %q: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// explain names the server as its package is named, scope kept, and says
// where that name and the state directory come from, and what becomes of
// a former state directory; it moves nothing.
func TestExplainNamesTheServerAndItsStateDirectory(t *testing.T) {
	base := t.TempDir()
	t.Setenv("MCPSANDBOX_STATE_DIR", base)
	former := filepath.Join(base, "mcp")
	if err := os.MkdirAll(filepath.Join(former, "npm", "_npx", "h0"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(former, "npm", "_npx", "h0"), "package.json", `{"dependencies":{"@playwright/mcp":"^0.0.40"}}`)
	e := explain(t, "--", "npx", "-y", "@playwright/mcp@latest", "--headless")
	for _, want := range []string{
		"name: @playwright/mcp",
		"from the npm package @playwright/mcp of npx (its version and the server's arguments do not count)",
		"state directory: " + filepath.Join(base, "npm+@playwright+mcp") + " (read-write, kept)",
		former + " moves there at the first start: its package cache holds @playwright/mcp and nothing else's",
	} {
		if !slices.Contains(e["Server"], want) {
			t.Errorf("the Server section lacks %q:\n%s", want, e.text("Server"))
		}
	}
	if e = explain(t, "--", "npx", "-y", "@stripe/mcp"); !slices.Contains(e["Server"], former+" (its former name) stays: its npm cache holds packages of other servers too (@playwright/mcp), which shared it under that name; each now has its own, to prepare again") {
		t.Errorf("the Server section of another server named mcp before does not say the former directory stays:\n%s", e.text("Server"))
	}
	if _, err := os.Stat(former); err != nil {
		t.Errorf("explain moved the former state directory: %v", err)
	}
}

// explain shows the approval tiers (the built-ins' own for the reference
// servers' writing tools, and the operator's with where each came from),
// the secret scan, and what becomes of the server's own requests, with
// the hosts a URL-mode elicitation may name.
func TestExplainShowsApprovalAndServerRequests(t *testing.T) {
	fs := explain(t, "--", "npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", t.TempDir())
	approval := fs.text("Approval")
	for _, want := range []string{"approve-tools        write_file, edit_file, move_file, create_directory", "(built-in filesystem)",
		"a call of these tools waits for a person", "refused at once with -31114 naming `mcpsandbox approve ID`; no answer", "within 2m refuses it",
		"refused before the server sees it (-31116, naming the argument)"} {
		if !strings.Contains(approval, want) {
			t.Errorf("filesystem's Approval section lacks %q:\n%s", want, approval)
		}
	}
	if rules := fs.text("MCP rules"); strings.Contains(rules, "approve-tools") {
		t.Errorf("MCP rules lists the approval keys too:\n%s", rules)
	}
	trusted := explain(t, "--no-approval", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", t.TempDir())
	if got := trusted.text("Approval"); !strings.Contains(got, "no-approval          true       (--no-approval)") ||
		!strings.Contains(got, "no tool call waits for a person: no-approval drops the tiers\nwrite_file, edit_file, move_file, create_directory") {
		t.Errorf("filesystem's Approval section under --no-approval:\n%s", got)
	}
	memory := explain(t, "--", "npx", "-y", "@modelcontextprotocol/server-memory@2026.8.31")
	if got := memory.text("Approval"); !strings.Contains(got, "approve-tools        delete_*   (built-in memory)") {
		t.Errorf("memory's Approval section:\n%s", got)
	}

	github := explain(t, "--", "npx", "-y", "@modelcontextprotocol/server-github@2025.4.8")
	if got := github.text("Approval"); !strings.Contains(got, "create_*, update_*") || !strings.Contains(got, "merge_pull_request") {
		t.Errorf("github's Approval section:\n%s", got)
	}
	if got := github.text("Server requests"); !strings.Contains(got, "a URL-mode elicitation only to: api.github.com:443, uploads.github.com:443, raw.githubusercontent.com:443") {
		t.Errorf("github's Server requests section:\n%s", got)
	}

	plain := explain(t, "--", "sh")
	if got := plain.text("Approval"); !strings.Contains(got, "no tool call waits for a person") {
		t.Errorf("sh's Approval section:\n%s", got)
	}
	if got := plain.text("Server requests"); !strings.Contains(got, "elicitation          allow      (default)") ||
		!strings.Contains(got, "a URL-mode elicitation is refused: no --allow-host names a host for it") {
		t.Errorf("sh's Server requests section:\n%s", got)
	}

	own := explain(t, "--approve-tool", "deploy_*", "--approval-timeout", "30s", "--no-secret-scan",
		"--server-sampling", "deny", "--server-elicitation", "decline", "--", "sh")
	approval = own.text("Approval")
	for _, want := range []string{"approve-tools        deploy_*   (--approve-tool)", "within 30s refuses it", "arguments that look like secrets are passed on (no-secret-scan)"} {
		if !strings.Contains(approval, want) {
			t.Errorf("the operator's Approval section lacks %q:\n%s", want, approval)
		}
	}
	requests := own.text("Server requests")
	for _, want := range []string{"elicitation          decline    (--server-elicitation)", "sampling             deny       (--server-sampling)"} {
		if !strings.Contains(requests, want) {
			t.Errorf("the operator's Server requests section lacks %q:\n%s", want, requests)
		}
	}
	if strings.Contains(requests, "URL-mode") {
		t.Errorf("a declined elicitation still names where a URL may go:\n%s", requests)
	}
}
