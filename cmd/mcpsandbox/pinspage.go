package main

import "github.com/mcpsandbox/mcpsandbox/internal/cmdline"

func pinsPage() *cmdline.Page {
	return &cmdline.Page{
		Name: "mcpsandbox pins - review and approve what servers tell the model",
		Synopsis: []string{
			"mcpsandbox pins list [OPTIONS] [NAME]",
			"mcpsandbox pins diff [OPTIONS] [NAME [ITEM...]]",
			"mcpsandbox pins approve [OPTIONS] NAME ITEM... | NAME --all | --all",
			"mcpsandbox pins verify [OPTIONS] [NAME]",
		},
		Description: []string{
			"The lock pins, per server, its package (name, exact version, integrity, publisher) and its contract: every tool, prompt, resource and resource template, and its instructions, serverInfo and capabilities, each as canonical JSON with its hash. What a server lists first is pinned (trust on first use); later, anything new or changed is held: left out of its list, a call of it answered with the error -31113, until you approve it here. docs/pins.md documents the lock and the rules.",
			"list prints each server of the lock: its id and display name, its package and who built it, how many items are pinned and which are held, and why; then the tool names two servers of the lock share, with a --tool-prefix for each that separates them. With NAME, every item of that server.",
			"diff shows what is held against what was approved, as you would review it: tools added or removed, parameters added, removed or retyped, required fields, annotation flips toward risk, then the changed description and instructions text line by line, and what the scanner finds in it (run now, with the lock's other servers as its neighbours and --policy's egress allowlist, and what the relay found when it held it). With NAME, that server only; with ITEMs, those items only.",
			"approve moves the held ITEMs of NAME (or with --all every held item of NAME, or with --all alone of every server) into the approved contract, writes the lock, and prints what it approved with the scanner's findings; a held removal, once approved, removes the pin. Hosts see an approved item from their next list. Naming an item that is not held is an error that names what is.",
			"verify exits 1 when anything is held (for NAME, or any server) or when the lock does not load, printing what drifted; else 0 with a one-line summary. Run it in CI on a lock committed to the repository.",
			"NAME is a server's id in the lock (as `npm+@modelcontextprotocol+server-memory`) or its display name (`@modelcontextprotocol/server-memory`, or a daemon config's name for it). ITEM is tool:NAME, prompt:NAME, resource:URI, resourceTemplate:TEMPLATE, instructions, serverInfo or capabilities, as list and diff print them.",
			"A lock that does not load (bad JSON, an unknown key, a hash that does not match its text) is an error at FILE:LINE:COLUMN with its fix, and is never repaired: mcpsandbox does not pin anything again over it.",
		},
		Options: []cmdline.Option{
			{Flag: "--lock FILE", Text: "The lock to read and write. Default: the one the options below choose, else $MCPSANDBOX_LOCK (an absolute path, as run reads it), else your lock, ~/.config/mcpsandbox/lock.json ($XDG_CONFIG_HOME's when set; root's /etc/mcpsandbox/lock.json)."},
			{Flag: "--policy FILE|NAME", Text: "The lock that policy's pins.lock names, as `run --policy` would use; when it names none, the one below or your lock. Its egress allowlist is the scanner's, for URLs in what diff and approve show."},
			{Flag: "--config FILE", Text: "The lock of the daemon config FILE: beside it, with .lock.json for .json (daemon.json's is daemon.lock.json)."},
			{Flag: "--all", Text: "approve: every held item of NAME, or of every server without NAME."},
			helpOption,
		},
		ExitStatus: []string{
			"0 on success; verify: nothing is held.",
			"1 when the lock does not load or cannot be written; verify: something is held; approve: an ITEM is not held.",
			"2 on a wrong command line, or a NAME the lock does not hold (the message lists the close ones).",
		},
		Examples: []cmdline.Example{
			{Command: "mcpsandbox pins list", Text: "See every pinned server, and what is held:"},
			{Command: "mcpsandbox pins diff @modelcontextprotocol/server-memory", Text: "Review what the memory server changed since you approved it:"},
			{Command: "mcpsandbox pins approve @modelcontextprotocol/server-memory tool:export_graph", Text: "Approve one held tool; hosts see it from their next list:"},
			{Command: "mcpsandbox pins verify --lock ./mcpsandbox.lock.json", Text: "In CI, fail when a project's lock holds anything not approved:"},
			{Command: "mcpsandbox pins list --config ~/.config/mcpsandbox/daemon.json notes", Text: "Every item pinned for the daemon's server notes:"},
		},
	}
}
