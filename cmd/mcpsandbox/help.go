package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
)

func helpCommand(args []string, std stdio) int {
	fs := newFlagSet("help")
	manDir := fs.String("man", "", "")
	if status, ok := parseFlags(fs, "help", args, std); !ok {
		return status
	}
	if *manDir != "" {
		if fs.NArg() > 0 {
			return usageFailure("help", "--man writes every command's page: give no command", std)
		}
		return writeManPages(*manDir, std)
	}
	switch fs.NArg() {
	case 0:
		mainPage().Write(std.Out)
		return exitOK
	case 1:
		cmd := findCommand(fs.Arg(0))
		if cmd == nil {
			return usageFailure("help", fmt.Sprintf("no command %q\n%s", fs.Arg(0), shortUsage()), std)
		}
		cmd.Page().Write(std.Out)
		return exitOK
	}
	return usageFailure("help", "give at most one command name", std)
}

func helpPage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox help - show the manual of mcpsandbox or of one command",
		Synopsis: []string{"mcpsandbox help [COMMAND]", "mcpsandbox COMMAND --help", "mcpsandbox help --man DIR"},
		Description: []string{
			"Without COMMAND, prints the overview of mcpsandbox. With COMMAND, prints that command's manual: what it does, every option with its default, exit statuses and examples.",
		},
		Options: []cmdline.Option{
			{Flag: "--man DIR", Text: "Write every page as a man page to DIR instead: mcpsandbox.1 and mcpsandbox-COMMAND.1 (the packages ship them). The date is SOURCE_DATE_EPOCH's when set, else today's."},
			helpOption,
		},
		ExitStatus: []string{"0 on success; 1 when --man cannot write; 2 for an unknown command."},
		Examples:   []cmdline.Example{{Command: "mcpsandbox help run", Text: "The options of run, the command MCP hosts are configured with:"}},
	}
}

// mainPage is `mcpsandbox help`: the overview.
func mainPage() *cmdline.Page {
	var cmds string
	for _, c := range commands {
		if !c.Hidden {
			cmds += fmt.Sprintf(" %-8s %s\n", c.Name, c.Page().Summary())
		}
	}
	return &cmdline.Page{
		Name: "mcpsandbox - run third-party stdio MCP servers confined and supervised",
		Synopsis: []string{
			"mcpsandbox run [OPTIONS] -- COMMAND [ARGS...]",
			"mcpsandbox prepare [OPTIONS] -- COMMAND [ARGS...]",
			"mcpsandbox wrap [--dry-run] [--undo] [--daemon] [FILE...]",
			"mcpsandbox policy list | show NAME | check FILE... | explain -- COMMAND",
			"mcpsandbox pins list|diff|approve|verify [--lock FILE] [NAME] [ITEM...]",
			"mcpsandbox approve ID | --list [--lock FILE]",
			"mcpsandbox upgrade NAME [--to VERSION]",
			"mcpsandbox daemon --config FILE",
			"mcpsandbox connect NAME",
			"mcpsandbox status [--json]",
			"mcpsandbox restart NAME",
			"mcpsandbox logs NAME [-f]",
			"mcpsandbox reload",
			"mcpsandbox service install|uninstall|start|stop|status|unit [--user]",
			"mcpsandbox doctor",
			"mcpsandbox version",
			"mcpsandbox help [COMMAND]",
		},
		Description: []string{
			"An MCP host (Claude Desktop, Cursor, VS Code, ...) normally starts a stdio MCP server such as `npx -y some-server` with all of your rights: it can read ~/.ssh, talk to the network, and take the machine down. Configure the host to start `mcpsandbox run -- npx -y some-server` instead. mcpsandbox then sits between the host and the server: it starts the server confined (its own namespaces, a minimal read-only root, an unprivileged user, no capabilities, a seccomp filter, cgroup limits), relays every JSON-RPC message exactly, pings the server to find hangs, and restarts it when it crashes or hangs while the host's session carries on.",
			"Commands:",
			cmds,
			"Run `mcpsandbox help COMMAND` or `mcpsandbox COMMAND --help` for a command's manual.",
			"The demo, with the bundled example server, is a program of its own, mcpsandbox-demo, so that this one, which hosts start for every server, links no MCP SDK, HTTP or TLS code.",
		},
		Options: []cmdline.Option{
			{Flag: "--help, -h", Text: "Print this page."},
			{Flag: "--version", Text: "Same as `mcpsandbox version`."},
		},
		ExitStatus: []string{"Each command documents its own. 2 always means the command line was wrong; the message says how to fix it."},
		Examples: []cmdline.Example{
			{Command: "mcpsandbox-demo", Text: "See what supervision and confinement do, with a bundled example server:"},
			{Command: "mcpsandbox prepare -- npx -y @modelcontextprotocol/server-filesystem@2026.8.31 ~/notes", Text: "Fetch a filesystem server's package once, with the network:"},
			{Command: "mcpsandbox run -- npx -y @modelcontextprotocol/server-filesystem@2026.8.31 ~/notes", Text: "Then what to configure a host with (hosts do not expand ~: write the full path): the server may read and write ~/notes and nothing else of your files, and has no network:"},
			{Command: "mcpsandbox doctor", Text: "Check that this machine can enforce the default confinement:"},
		},
	}
}

// writeManPages writes mcpsandbox.1 and mcpsandbox-NAME.1 for every command.
func writeManPages(dir string, std stdio) int {
	date := time.Now().UTC()
	if epoch, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64); err == nil {
		date = time.Unix(epoch, 0).UTC() // reproducible builds
	}
	source := "mcpsandbox " + currentBuild().Version
	pages := map[string]*cmdline.Page{"mcpsandbox": mainPage()}
	for _, c := range commands {
		pages["mcpsandbox-"+c.Name] = c.Page()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(std.Err, "mcpsandbox help --man: %v\n", err)
		return exitFailure
	}
	for name, page := range pages {
		var b bytes.Buffer
		page.WriteMan(&b, name, date.Format("2006-01-02"), source)
		if err := os.WriteFile(filepath.Join(dir, name+".1"), b.Bytes(), 0o644); err != nil {
			fmt.Fprintf(std.Err, "mcpsandbox help --man: %v\n", err)
			return exitFailure
		}
	}
	return exitOK
}
