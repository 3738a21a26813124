package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/policies"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/resolve"
)

// policyCommand is `mcpsandbox policy list|show NAME|check FILE...|explain
// [run's options] -- COMMAND`.
func policyCommand(args []string, std stdio) int {
	fs := newFlagSet("policy")
	if status, ok := parseFlags(fs, "policy", args, std); !ok {
		return status
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return usageFailure("policy", "say what to do: list, show NAME, check FILE... or explain -- COMMAND", std)
	}
	sub, rest := rest[0], rest[1:]
	if sub != "explain" { // explain takes run's options
		sfs := newFlagSet("policy")
		if status, ok := parseFlags(sfs, "policy", rest, std); !ok {
			return status
		}
		rest = sfs.Args()
	}
	switch sub {
	case "list":
		if len(rest) > 0 {
			return usageFailure("policy", "policy list takes no arguments", std)
		}
		return policyList(std)
	case "show":
		if len(rest) != 1 {
			return usageFailure("policy", "policy show takes one built-in policy's name (see policy list)", std)
		}
		return policyShow(rest[0], std)
	case "check":
		if len(rest) == 0 {
			return usageFailure("policy", "policy check takes the policy files to check", std)
		}
		return policyCheck(rest, std)
	case "explain":
		return policyExplain(rest, std)
	default:
		return usageFailure("policy", fmt.Sprintf("no policy subcommand %q: use list, show NAME, check FILE... or explain -- COMMAND", sub), std)
	}
}

// builtinNames lists the embedded policies.
func builtinNames() []string {
	entries, _ := fs.ReadDir(policies.FS, ".")
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// policyList prints each built-in with the first sentence of its leading
// comment, which says what it is for.
func policyList(std stdio) int {
	names := builtinNames()
	width := 0
	for _, name := range names {
		width = max(width, len(name))
	}
	for _, name := range names {
		data, _ := fs.ReadFile(policies.FS, name+".yaml")
		fmt.Fprintf(std.Out, "%-*s  %s\n", width, name, strings.TrimPrefix(purpose(data), name+": "))
	}
	return exitOK
}

// purpose is the first sentence of a policy file's leading comment.
func purpose(data []byte) string {
	var text []string
	lines := bufio.NewScanner(bytes.NewReader(data))
	for lines.Scan() {
		line, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), "#")
		if !ok || strings.TrimSpace(line) == "" {
			break
		}
		text = append(text, strings.TrimSpace(line))
	}
	all := strings.Join(text, " ")
	if i := strings.Index(all, ". "); i >= 0 {
		return all[:i+1]
	}
	return all
}

func policyShow(name string, std stdio) int {
	data, err := fs.ReadFile(policies.FS, name+".yaml")
	if policy.IsFile(name) || err != nil {
		return usageFailure("policy", fmt.Sprintf("no built-in policy %q: the built-ins are %s", name, strings.Join(builtinNames(), ", ")), std)
	}
	std.Out.Write(data)
	return exitOK
}

// policyCheck resolves each file as run --policy does, but without a
// launch line, and prints every error; the server's arguments are
// unknown here, so what uses ${ARG1} and the like is left out.
func policyCheck(files []string, std stdio) int {
	status := exitOK
	for _, f := range files {
		_, err := resolve.Resolve(resolve.Request{PolicyOnly: true, Policy: f, Host: launch.FromProcess()})
		if err != nil {
			fmt.Fprintln(std.Err, field.Message(err, keyOf))
			status = exitFailure
			continue
		}
		fmt.Fprintf(std.Out, "%s: ok\n", f)
	}
	return status
}

// keyOf names a field as a policy file's key: check has no flags.
func keyOf(f string) string {
	if f == resolve.PolicyField {
		return "policy"
	}
	return policy.KeyOf(f)
}

func policyPage() *cmdline.Page {
	return &cmdline.Page{
		Name: "mcpsandbox policy - list, show, check and explain policies",
		Synopsis: []string{
			"mcpsandbox policy list",
			"mcpsandbox policy show NAME",
			"mcpsandbox policy check FILE...",
			"mcpsandbox policy explain [OPTIONS] -- COMMAND [ARGS...]",
		},
		Description: []string{
			"list prints the built-in policies, which `run --policy NAME` and `extends: NAME` name, each with what it is for. show prints one of them as it is embedded.",
			"check reads each policy file exactly as `run --policy FILE` would (extends, variables, every value validated: the same resolution) and prints FILE: ok, or each error at FILE:LINE:COLUMN with its fix. There is no launch line here: the server's arguments are unknown, so a list item that uses ${ARG1} and the like is left out and elsewhere they expand to nothing, and ${STATE} is the state directory of a server named server. The format is documented in docs/policy.md.",
			"explain takes run's options and COMMAND and prints, without starting anything, what `mcpsandbox run` would apply: the policy and why it was chosen (and what it extends), the command with any version manager's shim resolved, the server's name and state directory, what the start would refuse, every mount as the sandbox will make it (its own, and each grant with who asked for it: policy, flag, argument, the program's installation, and which automatic grant a grant of yours covers), the environment (values of secret-looking names and of variables passed from yours are not shown), network, limits, seccomp and user as the sandbox reports them, MCP rules, audit, health and restart.",
		},
		Options: []cmdline.Option{
			{Group: "explain", Flag: "--policy FILE|NAME", Text: policyUsage},
			{Group: "Other", Flag: "--help, -h", Text: "Print this page. explain's other options are run's (mcpsandbox help run)."},
		},
		ExitStatus: []string{
			"0 when every file is valid (list, show and explain: always).",
			"1 when some file is not; each error is printed.",
			"2 on a wrong command line (explain: also a policy file that is not valid), or show with a name that is no built-in.",
		},
		Examples: []cmdline.Example{
			{Command: "mcpsandbox policy list", Text: "See the built-in policies:"},
			{Command: "mcpsandbox policy show default", Text: "Print the built-in default, a starting point for a file of your own:"},
			{Command: "mcpsandbox policy check ./github.yaml", Text: "Check a file before a host starts a server with it:"},
			{Command: "mcpsandbox policy explain -- npx -y @modelcontextprotocol/server-memory@2026.8.31", Text: "See what run would grant the memory server, and why:"},
		},
	}
}
