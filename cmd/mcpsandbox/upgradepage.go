package main

import "github.com/mcpsandbox/mcpsandbox/internal/cmdline"

func upgradePage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox upgrade - review a new version of a server before it runs",
		Synopsis: []string{"mcpsandbox upgrade NAME [--to VERSION] [--yes] [OPTIONS]"},
		Description: []string{
			"Finds the server NAME (an entry's name, the package's name, or its identity in the lock, e.g. npm+@modelcontextprotocol+server-memory) in the daemon's configuration and in the host files `mcpsandbox wrap` rewrote to `mcpsandbox run ... -- npx ...`. It upgrades servers that npx starts from one npm package.",
			"It resolves the candidate on the registry (--to VERSION, a version, tag or range; else latest) and refuses it when it was published less than the cooldown ago (pins.cooldown, 48h by default; --cooldown overrides) or, when the lock records who built the package (its provenance), when the candidate was built by someone else or carries no provenance.",
			"It prepares the candidate apart: into a temporary directory of its own, never the running server's cache, checked as prepare checks a package. It starts it there in a probe sandbox: no network whatever the policy says, no variables of your environment (values the policy sets itself, such as npx's offline switch, stay), an empty state directory, none of your grants (only the paths the launch line and the built-in policy need to start), 30 seconds at most. It lists everything the candidate tells the model (initialize, then tools, prompts, resources and resource templates, every page) and shows what changed against the contract the lock approved, item by item, with the package's version, integrity, publisher and publish time.",
			"Then it asks: on a terminal, y/N; --yes approves without asking, for scripts. With no terminal and no --yes it exits 1 after the diff, naming the command that approves it. On approval it prepares the candidate into the server's own cache, writes the new version into each entry that starts the server (every other byte of the files kept; wrap's record follows), records the package and the contract, approved, in the lock, and has a running daemon whose configuration changed read it again: its instances of the server swap to the new version through the invisible restart, hosts' sessions kept.",
		},
		Options: []cmdline.Option{
			{Flag: "--to VERSION", Text: "The version, dist-tag or range to upgrade to. Default: latest."},
			{Flag: "--yes", Text: "Approve the upgrade without asking, once the checks passed and the diff is shown."},
			{Flag: "--cooldown DURATION", Text: "Take only versions published at least DURATION ago (e.g. 72h; 0 takes any). Default: the server's policy's pins.cooldown, 48h."},
			{Flag: "--lock FILE", Text: "The lock to compare against and write. Default: the one the server's entry names (--lock in its run options), the one beside the daemon's configuration, else ~/.config/mcpsandbox/lock.json (root: /etc/mcpsandbox/lock.json)."},
			{Flag: "--config FILE", Text: "The daemon's configuration. Default: that of the daemon `mcpsandbox status` reports on, else ~/.config/mcpsandbox/daemon.json."},
			{Flag: "--file FILE", Text: "A host's file wrap rewrote (repeatable). Default: the hosts' usual files, as wrap finds them."},
			socketOptions[0], socketOptions[1],
			helpOption,
		},
		ExitStatus: []string{
			"0 when the server was upgraded, or is at that version already.",
			"1 when it was not: a check refused the candidate, its probe failed, or the upgrade was not approved.",
			"2 on a wrong command line.",
		},
		Examples: []cmdline.Example{
			{Command: "mcpsandbox upgrade memory --to 2026.8.31",
				Text: "Review the memory server's version 2026.8.31 and, if you approve, take it:"},
			{Command: "mcpsandbox upgrade @modelcontextprotocol/server-memory --yes --config /etc/mcpsandbox/daemon.json",
				Text: "In a script, take the latest version of a daemon's server once it is past the cooldown:"},
		},
	}
}
