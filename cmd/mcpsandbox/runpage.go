package main

import "github.com/mcpsandbox/mcpsandbox/internal/cmdline"

func runPage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox run - run one stdio MCP server confined and supervised",
		Synopsis: []string{"mcpsandbox run [OPTIONS] -- COMMAND [ARGS...]"},
		Description: []string{
			"Starts COMMAND as an MCP server speaking JSON-RPC on its standard input and output, and relays the MCP session of the host connected to mcpsandbox's own standard input and output. Configure your MCP host to start `mcpsandbox run [OPTIONS] -- COMMAND [ARGS...]` where it would have started COMMAND. Everything after `--` is the server's command line, untouched.",
			"Relay. Messages pass through byte for byte, but for one rewrite: requests the server sends the host (sampling, roots, elicitation) reach the host under ids of mcpsandbox's own (mcpsandbox:g<generation>:<n>), and the host's answers go back under the server's id, so that an answer can never reach a newer server process than the one that asked; notifications/cancelled is rewritten to match. Host ids that start with \"mcpsandbox:\" are remapped on the way to the server. A line on the server's standard output that is not JSON is logged and never reaches the host. The server's standard error goes to mcpsandbox's log.",
			"Confinement. By default the server runs in its own mount, pid, ipc, uts, cgroup and network namespaces (with --allow-host, a network from which it reaches only the hosts named, through mcpsandbox); sees a minimal read-only root with a private /tmp and an empty HOME and only the host paths granted with --ro and --rw; runs as an unprivileged user with no capabilities and no_new_privs; is limited by a seccomp filter, cgroup limits on memory, processes and CPU, and rlimits; and gets only the environment variables granted with --env. If any part of that cannot be enforced on this machine, run refuses to start the server and says what is missing (see `mcpsandbox doctor`). --unconfined turns all of it off.",
			"Supervision. Once the session is initialised, mcpsandbox pings the server every --ping-interval; after --ping-failures missed pings the server counts as hung. When the server exits or hangs, every request the host still has in flight is answered with one JSON-RPC error, the server is restarted according to --restart with --restart-backoff, the host's session (initialize, logging level, resource subscriptions) is replayed onto the new process, and requests are relayed again. The host keeps its session and never sees the restart except as that one error per in-flight request. After --max-restarts restarts within --restart-window mcpsandbox stops restarting and answers every request with an error saying why.",
			"Shutdown. When the host closes mcpsandbox's standard input, or mcpsandbox receives SIGTERM, SIGINT or SIGHUP, the server's standard input is closed; after --grace it gets SIGTERM, after another --grace SIGKILL, and no process it started is left behind. A second signal kills the server and all it started at once and removes its cgroup, then mcpsandbox exits 128+N for signal N.",
			"Logs are structured (key=value) lines on standard error, where hosts record them, or in --log-file.",
			"Sizes take an optional unit B, KiB, MiB or GiB, in any case (K, KB, M, MB, G, GB mean the same: binary, 1GB is 1024MiB); durations are Go durations such as 500ms, 15s, 2m.",
		},
		Options: append(append([]cmdline.Option{{Group: "Policy", Flag: "--policy FILE|NAME", Text: policyUsage}}, runOptionDocs()...),
			cmdline.Option{Group: "Other", Flag: "--help, -h", Text: "Print this page."}),
		ExitStatus: []string{
			"0 when the session ended cleanly: the host closed it, mcpsandbox was asked to stop (SIGTERM, SIGINT, SIGHUP), or the server exited with status 0 under --restart on-failure.",
			"1 when the server could not be kept up: its first start failed (for example confinement could not be set up, or COMMAND was not found), or it was down for good when the session ended (it crash-looped, or exited under --restart never). The last log line says why.",
			"2 when the command line or the policy file is wrong: unknown option or key, bad value or no COMMAND. The message names the fix, and for a policy file the key as section.key at FILE:LINE:COLUMN.",
		},
		Examples: []cmdline.Example{
			{Command: "mcpsandbox run -- npx -y @modelcontextprotocol/server-filesystem@2026.8.31 ~/notes",
				Text: "A filesystem server that may read and write ~/notes and nothing else of your files, without the network: the built-in policy filesystem, which the package selects, grants it its arguments. Fetch its package once first with `mcpsandbox prepare` and the same options and command:"},
			{Command: "mcpsandbox run -- npx -y @modelcontextprotocol/server-github@2025.4.8",
				Text: "The GitHub server (prepared likewise): its built-in policy, github, lets it reach GitHub's API hosts and no other, and gives it GITHUB_PERSONAL_ACCESS_TOKEN from your environment and nothing else of it (mcpsandbox policy show github):"},
			{Command: "mcpsandbox run --allow-host api.example.com --env API_KEY -- python3 server.py",
				Text: "A server no built-in knows that calls one API with one secret from your environment: it reaches api.example.com on ports 443 and 80 and nothing else (python3 SCRIPT selects the built-in python: the script's project read-only, run from the current directory):"},
			{Command: "mcpsandbox run --allow-host api.example.com:443 --allow-host db.example.com:5432 -- python3 server.py",
				Text: "An API over HTTPS only and a database on its own port, any TCP protocol alike:"},
			{Command: "mcpsandbox run --memory 512MiB --pids 64 --cpu 1 --ping-interval 5s -- python3 server.py",
				Text: "Tighter limits, and a faster heartbeat:"},
			{Command: "mcpsandbox run --policy ./notes.yaml --pids 64 -- npx -y @modelcontextprotocol/server-filesystem@2026.8.31 ~/notes",
				Text: "The settings of a policy file (the notes.yaml of docs/policy.md), one of them overridden on the command line:"},
			{Command: "mcpsandbox run --unconfined --log-level debug -- ./my-server",
				Text: "Supervision only, no confinement, with a detailed log (for a server you trust while you debug it):"},
		},
	}
}
