package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mcpsandbox/mcpsandbox/hostconfig"
	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
)

// wrapOptions are wrap's command line.
type wrapOptions struct {
	dryRun, undo, daemon, noPrepare bool
	daemonConfig                    string // the daemon's configuration file (--daemon)
	command                         string // what the host is to start: this binary, by absolute path
}

// wrapCommand is `mcpsandbox wrap [FILE...]`: it rewrites the stdio servers
// of hosts' configuration files to run through mcpsandbox (wrapfile.go), or
// gives the originals back (--undo).
func wrapCommand(args []string, std stdio) int {
	var o wrapOptions
	fs := newFlagSet("wrap")
	fs.BoolVar(&o.dryRun, "dry-run", false, "")
	fs.BoolVar(&o.undo, "undo", false, "")
	fs.BoolVar(&o.daemon, "daemon", false, "")
	fs.BoolVar(&o.noPrepare, "no-prepare", false, "")
	fs.StringVar(&o.daemonConfig, "daemon-config", "", "")
	fs.StringVar(&o.command, "command", "", "")
	var files []string
	for rest := args; ; { // FILEs and options in any order
		if status, ok := parseFlags(fs, "wrap", rest, std); !ok {
			return status
		}
		if fs.NArg() == 0 {
			break
		}
		files, rest = append(files, fs.Arg(0)), fs.Args()[1:]
	}
	home, _ := os.UserHomeDir()
	if o.daemon && o.daemonConfig == "" {
		o.daemonConfig = defaultDaemonConfig(home)
	}
	if o.command == "" {
		exe, err := wrapTarget()
		if err != nil {
			return usageFailure("wrap", err.Error()+": name the mcpsandbox hosts are to start with --command PATH", std)
		}
		o.command = exe
	}
	var named []hostFile
	for _, f := range files {
		named = append(named, hostFile{Path: f})
	}
	if len(named) == 0 {
		named = foundHostFiles(home)
		if len(named) == 0 {
			fmt.Fprintf(std.Err, "mcpsandbox wrap: no host configuration found; looked for:\n")
			for _, f := range usualHostFiles(home) {
				fmt.Fprintf(std.Err, "  %s (%s)\n", f.Path, f.Host)
			}
			fmt.Fprintf(std.Err, "name the file: mcpsandbox wrap FILE\n")
			return exitFailure
		}
	}
	status := exitOK
	for _, f := range named {
		if f.Host != "" {
			fmt.Fprintf(std.Out, "%s (%s):\n", f.Path, f.Host)
		} else {
			fmt.Fprintf(std.Out, "%s:\n", f.Path)
		}
		var ok bool
		if o.undo {
			ok = undoFile(f.Path, o, std)
		} else {
			ok = wrapFile(f.Path, o, std)
		}
		if !ok {
			status = exitFailure
		}
	}
	return status
}

// wrapTarget is the mcpsandbox a wrapped entry starts: this binary, by an
// absolute path, since hosts start servers with the PATH of a desktop
// session, which often lacks the directory a user's shell finds it in.
// Where PATH finds this same binary (/usr/bin/mcpsandbox, a symlink), that
// name, so that an upgrade that moves what it points to keeps working.
func wrapTarget() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot tell where this mcpsandbox is: %v", err)
	}
	if found, err := exec.LookPath("mcpsandbox"); err == nil {
		if abs, err := filepath.Abs(found); err == nil && sameFile(abs, exe) {
			return abs, nil
		}
	}
	return exe, nil
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// hostFile is a configuration file to wrap, and whose it is when wrap
// found it.
type hostFile struct{ Path, Host string }

// vscodeEditions are VS Code's builds that read MCP servers, by the
// directory of ~/.config each keeps its user files in.
var vscodeEditions = []struct{ dir, name string }{
	{"Code", "VS Code"},
	{"Code - Insiders", "VS Code Insiders"},
	{"VSCodium", "VSCodium"},
}

// usualHostFiles are where the hosts keep their servers on Linux: the
// user's files, then the current directory's project files.
func usualHostFiles(home string) []hostFile {
	files := []hostFile{
		{filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"), "Claude Desktop"},
		{filepath.Join(home, ".cursor", "mcp.json"), "Cursor"},
	}
	for _, v := range vscodeEditions {
		user := filepath.Join(home, ".config", v.dir, "User")
		files = append(files,
			hostFile{filepath.Join(user, "mcp.json"), v.name + ", user"},
			hostFile{filepath.Join(user, "settings.json"), v.name + ", user settings"})
		for _, p := range vscodeProfiles(user) {
			files = append(files,
				hostFile{filepath.Join(p.dir, "mcp.json"), v.name + ", profile " + p.name},
				hostFile{filepath.Join(p.dir, "settings.json"), v.name + ", profile " + p.name + " settings"})
		}
	}
	return append(files,
		hostFile{filepath.Join(".vscode", "mcp.json"), "VS Code, this workspace"},
		hostFile{filepath.Join(".vscode", "settings.json"), "VS Code, this workspace's settings"},
		hostFile{filepath.Join(".cursor", "mcp.json"), "Cursor, this project"})
}

func foundHostFiles(home string) []hostFile {
	var found []hostFile
	for _, f := range usualHostFiles(home) {
		_, err := os.Stat(f.Path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err == nil && !mayHaveServers(f.Path):
		default:
			found = append(found, f) // wrapFile says what is wrong with it, if anything
		}
	}
	return found
}

// mayHaveServers is false for a settings.json with no MCP servers, which
// most are: wrap has nothing to say about those. One that does not parse
// counts when it names mcp, so that wrap says what is wrong with it; one
// wrap keeps originals of counts, for --undo.
func mayHaveServers(path string) bool {
	if filepath.Base(path) != "settings.json" {
		return true
	}
	if _, err := os.Stat(path + wrapStateSuffix); err == nil {
		return true
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return true
	}
	entries, err := hostconfig.FileEntries(path, data)
	if err != nil {
		return bytes.Contains(data, []byte(`"mcp"`))
	}
	return len(entries) > 0
}

func wrapPage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox wrap - make hosts' configured servers run through mcpsandbox",
		Synopsis: []string{"mcpsandbox wrap [--dry-run] [--daemon] [FILE...]", "mcpsandbox wrap --undo [--dry-run] [FILE...]"},
		Description: []string{
			"Rewrites each stdio server of a Claude Desktop or Cursor configuration (mcpServers), a VS Code mcp.json (servers) or a VS Code settings.json (\"mcp\": {\"servers\": ...}, the only servers wrap reads in a file of that name) so that the host starts it through mcpsandbox: the entry's command becomes this mcpsandbox by its absolute path (hosts start servers with a desktop session's PATH, which may not find it) and its args `run --env NAME... -- COMMAND ARGS...`, with one --env for each variable of the entry's env and envFile, so the host's values reach the server. The built-in policy the launch line selects applies, as for `mcpsandbox run` (mcpsandbox policy explain -- COMMAND shows which).",
			"Only command and args change (and an npx package spec, made exact): every other field and setting, the order of the keys, the indentation, comments, trailing commas and line breaks of the file stay as they are. Each entry is checked first as its start will be (its policy resolved, its grants as the sandbox will find them), and one that could not start is left unwrapped, with the reason. An npx line with a floating package spec (npx -y pkg, pkg@latest, a range) gets the exact version the registry resolves it to now, in the host's file too (npx -y pkg@1.2.3, noted per entry, shown by --dry-run), so the file names the code it runs. An npx or uvx server is then prepared (mcpsandbox prepare, one progress line each on standard error; it records the package in the lock), so the host starts it offline; the prepare gets the values of the entry's env and envFile, as the host will give them (those with a ${...} the host expands: yours), so a variable there that skips an install's download (\"PUPPETEER_SKIP_DOWNLOAD\": \"true\") skips it. One whose prepare fails is left unwrapped, with the reason, and when its install was kept from a host, the prepare command that allows it and the wrap --no-prepare that wraps it afterwards.",
			"Left as they are, with a note: an entry already run by mcpsandbox, one VS Code runs in its own sandbox (\"sandboxEnabled\": true: wrapping it would not apply VS Code's sandbox settings; remove sandboxEnabled to have mcpsandbox confine it instead, or keep it in the daemon's configuration, which maps those settings), and http or sse servers, which no host starts. Wrapping a file twice changes nothing.",
			"Without FILE, wraps each of these that exists, naming it: ~/.config/Claude/claude_desktop_config.json (Claude Desktop), ~/.cursor/mcp.json (Cursor), ~/.config/Code/User/mcp.json and ~/.config/Code/User/settings.json (VS Code; the same two in ~/.config/Code - Insiders/User for VS Code Insiders and in ~/.config/VSCodium/User for VSCodium, and those of each profile in User/profiles/ID, named as VS Code names it), and ./.vscode/mcp.json, ./.vscode/settings.json and ./.cursor/mcp.json of the current directory. A settings.json counts only when it has MCP servers.",
			"Before its first change to FILE it copies it to FILE.mcpsandbox-backup (never overwritten afterwards). It keeps each original entry, byte for byte, in FILE.mcpsandbox-wrap.json beside it, not in the entry: VS Code's schema for mcp.json allows no keys but its own, and flags any other. --undo puts the originals back from there and keeps every other change made to FILE since; an entry edited since it was wrapped gets its original command and args back and keeps the rest of the edit.",
			"With --daemon the entry becomes `connect NAME` instead, and the server (its command, args, env, envFile, cwd and VS Code sandbox keys) is added under the same name to the daemon's configuration file (see mcpsandbox help daemon), made if missing; a running daemon whose config that is reads it again (as `mcpsandbox reload` does), so it keeps the server at once. The daemon's file is checked as the daemon reads it, so a server it could not run (a ${input:...} or ${workspaceFolder} it cannot expand) stays unwrapped, with the reason. --undo takes out again the servers wrap added. To move a file's servers from run to the daemon or back, --undo first: wrap leaves entries that already run through mcpsandbox as they are.",
		},
		Options: []cmdline.Option{
			{Flag: "--dry-run", Text: "Print a unified diff of what would change in each file and write nothing. Each entry is checked as wrap checks it, so an entry wrap would leave unwrapped is named, with the same reason; nothing is prepared."},
			{Flag: "--undo", Text: "Give back the original entries that wrap rewrote in FILE, and remove the servers it added to the daemon's configuration."},
			{Flag: "--daemon", Text: "Have the host connect to the daemon's server instead of starting mcpsandbox run."},
			{Flag: "--daemon-config FILE", Text: "The daemon's configuration file that --daemon adds servers to. Default: the config of the daemon that answers `mcpsandbox status`, else ~/.config/mcpsandbox/daemon.json, which `mcpsandbox service install --user` runs."},
			{Flag: "--no-prepare", Text: "Do not prepare npx and uvx servers: they then fail at start, confined without the network, until you prepare them (mcpsandbox help prepare)."},
			{Flag: "--command PATH", Text: "The mcpsandbox the host is to start. Default: this one's absolute path (the name PATH finds it by, when PATH finds this same file)."},
			{Flag: "--help, -h", Text: "Print this page."},
		},
		ExitStatus: []string{
			"0 when every stdio server is wrapped (or given back), or was already.",
			"1 when a file could not be read or written, or a server was left unwrapped (its prepare failed, the daemon could not run it); the others are wrapped all the same.",
			"2 on a wrong command line.",
		},
		Examples: []cmdline.Example{
			{Command: "mcpsandbox wrap --dry-run ~/.config/Claude/claude_desktop_config.json", Text: "See what wrap would change in Claude Desktop's servers:"},
			{Command: "mcpsandbox wrap ~/.config/Claude/claude_desktop_config.json", Text: "Then change it (restart Claude Desktop afterwards):"},
			{Command: "mcpsandbox wrap --undo ~/.config/Claude/claude_desktop_config.json", Text: "Give back the entries as they were:"},
			{Command: "mcpsandbox wrap --daemon ~/.cursor/mcp.json", Text: "Have Cursor's servers kept by the daemon (~/.config/mcpsandbox/daemon.json), Cursor connecting to them:"},
		},
	}
}
