package main

import (
	"bytes"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
)

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli(args, stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

func TestBadCommandLinesExit2NamingTheFix(t *testing.T) {
	cases := []struct {
		args []string
		want []string // all must appear on stderr
	}{
		{[]string{}, []string{"usage: mcpsandbox COMMAND", "run", "demo"}},
		{[]string{"rnu"}, []string{`unknown command "rnu"`, "mcpsandbox help"}},
		{[]string{"run", "--memroy", "1G", "--", "srv"}, []string{"unknown option --memroy", "did you mean --memory?", "mcpsandbox help run"}},
		{[]string{"run", "--memory"}, []string{"--memory needs a value"}},
		{[]string{"run", "--memory", "lots", "--", "srv"}, []string{"--memory", "KiB, MiB and GiB"}},
		{[]string{"run", "--ping-interval", "5", "--", "srv"}, []string{"--ping-interval", "500ms"}},
		{[]string{"run", "--restart-backoff", "1s", "--", "srv"}, []string{"--restart-backoff", "MIN..MAX"}},
		{[]string{"run", "--restart", "sometimes", "--", "srv"}, []string{"--restart", "always, on-failure or never"}},
		{[]string{"run", "--net", "bridge", "--", "srv"}, []string{"--net", "none, host or egress"}},
		{[]string{"run", "--net", "host", "--allow-host", "api.example.test", "--", "srv"}, []string{"--net host: contradicts --allow-host", "drop --net"}},
		{[]string{"run", "--allow-host", "api.example.test:0", "--", "srv"}, []string{"--allow-host \"api.example.test:0\"", "HOST[:PORT]"}},
		{[]string{"run", "--log-level", "loud", "--", "srv"}, []string{"--log-level", "debug, info, warn or error"}},
		{[]string{"run", "--cpu", "half", "--", "srv"}, []string{"--cpu", "0.5"}},
		{[]string{"run", "--env", "=x", "--", "srv"}, []string{"--env", "NAME or NAME=VALUE"}},
		{[]string{"run", "--unconfined"}, []string{"no server command", "put it after --"}},
		{[]string{"run", "--log-file", "/nonexistent-dir/x.log", "--", "srv"}, []string{"--log-file", "writable path"}},
		{[]string{"version", "extra"}, []string{`unexpected argument "extra"`}},
		{[]string{"doctor", "--fix"}, []string{"unknown option --fix"}},
		{[]string{"demo", "--unconfined"}, []string{`"demo" is a program of its own now`, "mcpsandbox-demo"}},
		{[]string{"help", "nope"}, []string{`no command "nope"`}},
	}
	for _, c := range cases {
		stdout, stderr, code := runCLI(t, c.args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", c.args, code, exitUsage, stderr)
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

// Every command's --help is a man page, identical to `help COMMAND`.
func TestEveryCommandHasAManPage(t *testing.T) {
	for _, c := range commands {
		page, stderr, code := runCLI(t, c.Name, "--help")
		if code != exitOK || stderr != "" {
			t.Errorf("%s --help: exit %d, stderr %q", c.Name, code, stderr)
		}
		for _, section := range []string{"NAME\n    mcpsandbox " + c.Name, "SYNOPSIS\n", "DESCRIPTION\n", "OPTIONS\n", "--help", "EXIT STATUS\n", "EXAMPLES\n"} {
			if !strings.Contains(page, section) {
				t.Errorf("%s --help lacks %q", c.Name, section)
			}
		}
		if viaHelp, _, _ := runCLI(t, "help", c.Name); viaHelp != page {
			t.Errorf("help %s differs from %s --help", c.Name, c.Name)
		}
		if short, _, _ := runCLI(t, c.Name, "-h"); short != page {
			t.Errorf("%s -h differs from %s --help", c.Name, c.Name)
		}
		for i, line := range strings.Split(page, "\n") {
			if len(line) > cmdline.Width && !strings.HasPrefix(line, "        ") {
				t.Errorf("%s --help line %d is %d wide: %q", c.Name, i+1, len(line), line)
			}
		}
	}
}

func TestOverviewListsVisibleCommandsOnly(t *testing.T) {
	page, _, code := runCLI(t, "help")
	if code != exitOK {
		t.Fatalf("help exited %d", code)
	}
	if same, _, _ := runCLI(t, "--help"); same != page {
		t.Error("--help differs from help")
	}
	for _, c := range commands {
		listed := strings.Contains(page, "\n     "+c.Name+" ")
		if listed == c.Hidden {
			t.Errorf("command %s: listed=%v hidden=%v", c.Name, listed, c.Hidden)
		}
	}
}

func TestVersionNamesBuild(t *testing.T) {
	old := [2]string{version, commit}
	defer func() { version, commit = old[0], old[1] }()
	version, commit = "v9.8.7", "0123abc"
	out, _, code := runCLI(t, "version")
	if code != exitOK {
		t.Fatalf("version exited %d", code)
	}
	for _, want := range []string{"mcpsandbox v9.8.7", "commit:     0123abc", runtime.Version(), "libseccomp: 2."} {
		if !strings.Contains(out, want) {
			t.Errorf("version output %q lacks %q", out, want)
		}
	}
	if same, _, _ := runCLI(t, "--version"); same != out {
		t.Error("--version differs from version")
	}
}

// Every command and subcommand that `mcpsandbox help` lists answers
// --help and -h with its manual on stdout, status 0, as README says.
func TestEverySubcommandAnswersHelp(t *testing.T) {
	page, _, _ := runCLI(t, "help")
	synopsis, _, _ := strings.Cut(strings.SplitN(page, "SYNOPSIS\n", 2)[1], "\n\n")
	var lines [][]string
	for _, line := range strings.Split(synopsis, "\n") {
		words := strings.Fields(line)
		if len(words) < 2 || words[0] != "mcpsandbox" {
			t.Fatalf("synopsis line %q", line)
		}
		lines = append(lines, []string{words[1]})
		rest := strings.Join(words[2:], " ")
		if !strings.Contains(rest, "|") {
			continue
		}
		for _, alt := range strings.Split(rest, "|") {
			lines = append(lines, []string{words[1], strings.Fields(alt)[0]})
		}
	}
	if len(lines) < 10 {
		t.Fatalf("found only %q in the synopsis", lines)
	}
	for _, line := range strings.Split(page, "\n") {
		if len(line) > cmdline.Width && !strings.HasPrefix(line, "        ") {
			t.Errorf("help: line %q is %d wide", line, len(line))
		}
	}
	for _, line := range lines {
		want, _, _ := runCLI(t, "help", line[0])
		for _, h := range []string{"--help", "-h"} {
			args := append(slices.Clone(line), h)
			stdout, stderr, code := runCLI(t, args...)
			if code != exitOK || stderr != "" || stdout != want {
				t.Errorf("mcpsandbox %s: exit %d, stderr %q, stdout the manual of %s: %v", strings.Join(args, " "), code, stderr, line[0], stdout == want)
			}
		}
	}
}
