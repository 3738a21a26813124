package main

import (
	"flag"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// runFlag maps one `run` flag to one Policy field. The table below is the
// whole mapping; runflags_test.go checks that it covers every field exactly
// once.
type runFlag struct {
	Name  string // without dashes
	Arg   string // placeholder for the value in --help; "" for booleans
	Field string // the Policy field it sets, named in --help
	Group string
	Usage string
	Value func(p *policy.Policy) flag.Value
}

var runFlags = []runFlag{
	{"max-message", "SIZE", "MaxMessage", "Relay",
		"Largest JSON-RPC message accepted in either direction. A longer line is discarded without being buffered whole, and the request it belonged to is answered with an error.",
		func(p *policy.Policy) flag.Value { return &p.MaxMessage }},

	{"allow-tool", "GLOB", "AllowTools", "MCP rules",
		"Only tools whose name matches GLOB (* any run of characters but /, ? one, [a-z] a class) exist for the host: the others are left out of tools/list and a tools/call to one is answered by mcpsandbox with error -31107 without reaching the server. Repeatable; none given means every tool.",
		func(p *policy.Policy) flag.Value { return listValue{&p.AllowTools} }},
	{"deny-tool", "GLOB", "DenyTools", "MCP rules",
		"Hide the tools whose name matches GLOB as --allow-tool hides the others; deny wins over allow. Repeatable.",
		func(p *policy.Policy) flag.Value { return listValue{&p.DenyTools} }},
	{"tool-prefix", "P", "ToolPrefix", "MCP rules",
		"Name every tool of the server P+name for the host (tools/list), and call the server's own tool for P+name: tell servers apart whose tools share names. --allow-tool and --deny-tool match the server's own names. A tools/call without the prefix gets -32602, unknown tool.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.ToolPrefix} }},
	{"call-timeout", "DURATION", "CallTimeout", "MCP rules",
		"Longest a tools/call may take: then the host gets error -31108, the server notifications/cancelled for the call, and its late answer is dropped. 0 means no limit.",
		func(p *policy.Policy) flag.Value { return durationValue{&p.CallTimeout} }},
	{"allow-prompt", "GLOB", "AllowPrompts", "MCP rules",
		"Only prompts whose name matches GLOB (as --allow-tool) exist for the host: the others are left out of prompts/list, and a prompts/get or completion/complete of one is answered by mcpsandbox with error -31107 without reaching the server. Repeatable; none given means every prompt.",
		func(p *policy.Policy) flag.Value { return listValue{&p.AllowPrompts} }},
	{"deny-prompt", "GLOB", "DenyPrompts", "MCP rules",
		"Hide the prompts whose name matches GLOB as --allow-prompt hides the others; deny wins over allow. Repeatable.",
		func(p *policy.Policy) flag.Value { return listValue{&p.DenyPrompts} }},
	{"allow-resource", "GLOB", "AllowResources", "MCP rules",
		"Only resources whose URI matches GLOB exist for the host. In a URI glob * runs across / too (file:///srv/* is everything under /srv), ? is one character, [a-z] a class. The others are left out of resources/list and resources/templates/list (which match the uriTemplate), resources/read, resources/subscribe and completion/complete of one get error -31107 without reaching the server, and its notifications/resources/updated are dropped. With resource rules a URI with a . or .. segment, a %2e, %2f or %5c escape, or an upper-case scheme is refused as uncheckable. Repeatable; none given means every resource.",
		func(p *policy.Policy) flag.Value { return listValue{&p.AllowResources} }},
	{"deny-resource", "GLOB", "DenyResources", "MCP rules",
		"Hide the resources whose URI matches GLOB as --allow-resource hides the others; deny wins over allow. Repeatable.",
		func(p *policy.Policy) flag.Value { return listValue{&p.DenyResources} }},
	{"rate-limit", "[GLOB=]N/DURATION", "RateLimits", "MCP rules",
		"Let each tool be called at most N times per DURATION (a token bucket: up to N at once, then one more every DURATION/N). N/DURATION applies to every tool, GLOB=N/DURATION to the tools matching GLOB; each tool has its own budget, and the most specific matching GLOB (most literal characters; the later on a tie) sets it. A call over it is answered by mcpsandbox with error -31109, its data saying the limit and retryAfterMs, and never reaches the server. Repeatable, e.g. --rate-limit 60/1m --rate-limit 'write_*=5/1m'.",
		func(p *policy.Policy) flag.Value { return listValue{&p.RateLimits} }},
	{"max-concurrent-calls", "N", "MaxConcurrentCalls", "MCP rules",
		"Most tools/call the host may have in flight at once (held for a restarting server included). One more is answered by mcpsandbox at once with error -31110, not queued, and never reaches the server. 0 means no cap.",
		func(p *policy.Policy) flag.Value { return intValue{&p.MaxConcurrentCalls} }},
	{"no-tool-hints", "", "NoToolHints", "MCP rules",
		"Add no hint of mcpsandbox's to a failed tools/call. By default a tool error quoting EROFS, EACCES, ENOENT or [Errno N] for a path the policy explains (in a read-only grant, or in a path the command names that is not granted) gets one more text item, beginning \"mcpsandbox: \" and marked in its _meta with io.github.mcpsandbox/hint, naming the setting that fixes it; it is decided from the policy alone and never says whether a file exists on the host.",
		func(p *policy.Policy) flag.Value { return boolValue{&p.NoToolHints} }},

	{"pin", "MODE", "Pin", "Pins",
		"What to do with a server the lock does not pin yet: tofu pins the tools, prompts, resources and instructions its first session lists (trust on first use), strict refuses it, off only logs. Once pinned, a new or changed item is held until `mcpsandbox pins approve`.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.Pin} }},
	{"lock", "FILE", "Lock", "Pins",
		"The lock that pins servers (an absolute path): a project's own, committed beside its code. Default: ~/.config/mcpsandbox/lock.json (root: /etc/mcpsandbox/lock.json); a daemon's servers use the lock beside its config.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.Lock} }},
	{"cooldown", "DURATION", "Cooldown", "Pins",
		"A package version published more recently than DURATION is refused by `upgrade` and warned about by a first `prepare`. 0 takes any version.",
		func(p *policy.Policy) flag.Value { return durationValue{&p.Cooldown} }},
	{"tool-override", "TOOL=JSON", "ToolOverrides", "Pins",
		"Show the host TOOL (the server's own name) with the operator's description or riskier annotations instead of the server's, e.g. --tool-override 'write_file={\"description\":\"Write a file under /srv/notes.\",\"annotations\":{\"destructiveHint\":true}}'. An annotation may only raise risk (readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true). The lock pins the tool as overridden. Repeatable; a later one for a tool replaces an earlier.",
		func(p *policy.Policy) flag.Value { return listValue{&p.ToolOverrides} }},

	{"approve-tool", "GLOB", "ApproveTools", "Approval",
		"A tools/call of a tool whose name (the server's own) matches GLOB waits for a person's approval: asked through the host (a 2026-07-28 input request, or elicitation/create where the host declared it), otherwise answered at once with error -31114 naming `mcpsandbox approve ID`. Decline, cancel, no answer within --approval-timeout, or a host that goes away refuse it (-31115). Same globs as --deny-tool. Repeatable.",
		func(p *policy.Policy) flag.Value { return listValue{&p.ApproveTools} }},
	{"approve-annotated", "HINT", "ApproveAnnotated", "Approval",
		"Also wait for approval on tools whose annotations say HINT: destructive (destructiveHint, true by MCP's default unless readOnlyHint) or open-world (openWorldHint, true by default). Annotations only ever raise the tier: the pinned ones count, and a tool that changes them toward safety is held by the pins. Repeatable.",
		func(p *policy.Policy) flag.Value { return listValue{&p.ApproveAnnotated} }},
	{"approval-timeout", "DURATION", "ApprovalTimeout", "Approval",
		"How long a person has to answer mcpsandbox's question, and how long a deferred approval stays open; past it the call is refused. --call-timeout starts only once the call is approved.",
		func(p *policy.Policy) flag.Value { return durationValue{&p.ApprovalTimeout} }},
	{"no-approval", "", "NoApproval", "Approval",
		"No tool call waits for a person: drops every approval tier, the built-in policy's own (filesystem's write_file, ...) and any other, for a server you trust to write unattended. run logs the tiers it dropped.",
		func(p *policy.Policy) flag.Value { return boolValue{&p.NoApproval} }},
	{"no-secret-scan", "", "NoSecretScan", "Approval",
		"Let a tools/call's arguments carry what looks like a secret. By default a private key block or a known token format (GitHub, GitLab, Slack, AWS, OpenAI and Anthropic keys, JWTs) anywhere in the arguments refuses the call with error -31116 naming the argument's path, never its value, before it reaches the server.",
		func(p *policy.Policy) flag.Value { return boolValue{&p.NoSecretScan} }},
	{"secret-pattern", "NAME=REGEX", "SecretPatterns", "Approval",
		"One more secret format refused in arguments, an RE2 regular expression, e.g. --secret-pattern 'acme-key=acme_[A-Za-z0-9]{32}'. Repeatable.",
		func(p *policy.Policy) flag.Value { return listValue{&p.SecretPatterns} }},

	{"server-elicitation", "MODE", "ServerElicitation", "Server requests",
		"What becomes of the server's elicitation/create: allow relays it (a URL-mode one only to a URL whose host --allow-host names), deny answers the server an error (-31106), decline answers as a user who said no. The host never sees a denied or declined one.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.ServerElicitation} }},
	{"server-sampling", "MODE", "ServerSampling", "Server requests",
		"What becomes of the server's sampling/createMessage (a completion from the user's model): allow, deny or decline, as --server-elicitation.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.ServerSampling} }},
	{"server-roots", "MODE", "ServerRoots", "Server requests",
		"What becomes of the server's roots/list: allow, deny, or decline (an empty list of roots).",
		func(p *policy.Policy) flag.Value { return stringValue{&p.ServerRoots} }},
	{"server-request-limit", "N/DURATION", "ServerRequestLimit", "Server requests",
		"Most requests the server may send the host per DURATION, all kinds together (a token bucket); one more is answered the server with error -31106. \"\" means no limit.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.ServerRequestLimit} }},

	{"audit-log", "FILE", "AuditLog", "Audit",
		"Append one JSON line per tools/call, prompts/get and resources/read of the host to FILE when the call ends: time, server, session, method, tool, prompt or URI, arguments with the values of secret-looking keys masked as ***, outcome, error code, duration and bytes each way. The file is created mode 0600 (an existing one of yours is set to 0600); a path mcpsandbox cannot open stops it at the start.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.AuditLog} }},
	{"audit-max-size", "SIZE", "AuditMaxSize", "Audit",
		"Size past which the audit log is renamed FILE.1 (FILE.1 becoming FILE.2, up to FILE.3) and a fresh FILE begun. 0 means never.",
		func(p *policy.Policy) flag.Value { return &p.AuditMaxSize }},
	{"audit-mask", "GLOB", "AuditMask", "Audit",
		"Also mask in the audit log the values of argument keys matching GLOB, case-insensitively, at any depth (built in: *token*, *secret*, *passw*, *key, *auth, *cookie*, *credential*, *session* and a few more). Repeatable.",
		func(p *policy.Policy) flag.Value { return listValue{&p.AuditMask} }},

	{"log-file", "PATH", "LogFile", "Logging",
		"Append mcpsandbox's own log to PATH instead of standard error. Hosts usually capture standard error already.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.LogFile} }},
	{"log-level", "LEVEL", "LogLevel", "Logging",
		"Least severe log level written: debug, info, warn or error.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.LogLevel} }},

	{"ping-interval", "DURATION", "PingInterval", "Heartbeat",
		"Time between heartbeat pings to the server once its session is initialised. 0 turns pings off.",
		func(p *policy.Policy) flag.Value { return durationValue{&p.PingInterval} }},
	{"ping-timeout", "DURATION", "PingTimeout", "Heartbeat",
		"How long one ping may go unanswered before it counts as missed.",
		func(p *policy.Policy) flag.Value { return durationValue{&p.PingTimeout} }},
	{"ping-failures", "N", "PingFailures", "Heartbeat",
		"Consecutive missed pings after which the server is considered hung, killed and restarted as for a crash.",
		func(p *policy.Policy) flag.Value { return intValue{&p.PingFailures} }},
	{"start-timeout", "DURATION", "StartTimeout", "Heartbeat",
		"How long the server may take to answer the host's initialize (or server/discover) before mcpsandbox answers it with an error (-31112) naming the hosts the server tried and its policy does not allow. 0 waits for ever.",
		func(p *policy.Policy) flag.Value { return durationValue{&p.StartTimeout} }},

	{"restart", "MODE", "Restart", "Restart",
		"When to restart the server after it exits: always, on-failure (non-zero status, signal, hang) or never.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.Restart} }},
	{"restart-backoff", "MIN..MAX", "RestartBackoff", "Restart",
		"Delay before a restart: MIN at first, doubling with each further restart up to MAX.",
		func(p *policy.Policy) flag.Value { return &p.RestartBackoff }},
	{"max-restarts", "N", "MaxRestarts", "Restart",
		"Restarts allowed within --restart-window before mcpsandbox gives up and answers every request with an error saying why. 0 means no limit.",
		func(p *policy.Policy) flag.Value { return intValue{&p.MaxRestarts} }},
	{"restart-window", "DURATION", "RestartWindow", "Restart",
		"The sliding window in which --max-restarts is counted.",
		func(p *policy.Policy) flag.Value { return durationValue{&p.RestartWindow} }},
	{"grace", "DURATION", "Grace", "Restart",
		"At shutdown, time the server gets after its standard input closes before SIGTERM, and again after SIGTERM before SIGKILL.",
		func(p *policy.Policy) flag.Value { return durationValue{&p.Grace} }},

	{"unconfined", "", "Unconfined", "Confinement",
		"Run the server with your own rights and no confinement at all. A warning is logged on every start. Use only for servers you trust, or to find out whether confinement is what breaks one.",
		func(p *policy.Policy) flag.Value { return boolValue{&p.Unconfined} }},
	{"ro", "PATH", "ReadOnly", "Confinement",
		"Make the host path PATH visible read-only at the same path inside. Repeatable.",
		func(p *policy.Policy) flag.Value { return listValue{&p.ReadOnly} }},
	{"rw", "PATH", "ReadWrite", "Confinement",
		"Make the host path PATH visible read-write at the same path inside. Repeatable.",
		func(p *policy.Policy) flag.Value { return listValue{&p.ReadWrite} }},
	{"tmp-size", "SIZE", "TmpSize", "Confinement",
		"Size of the private tmpfs mounted at /tmp.",
		func(p *policy.Policy) flag.Value { return &p.TmpSize }},
	{"net", "MODE", "Net", "Confinement",
		"Network: none (a private network with only loopback), egress (a private network from which only the hosts --allow-host names are reached, through mcpsandbox; giving --allow-host selects it) or host (the host's network, all of it).",
		func(p *policy.Policy) flag.Value { return stringValue{&p.Net} }},
	{"allow-host", "SPEC", "AllowHosts", "Confinement",
		"Let the server connect to SPEC and to nothing else of the network: HOST[:PORT] (api.example.com), *.DOMAIN[:PORT] (any name below DOMAIN, not DOMAIN itself), * (any public host) or IP[/BITS][:PORT] (IPv6 in brackets when a port follows); without a port, 443 and 80. Any TCP protocol, with no proxy setting in the server: it resolves names through mcpsandbox, which answers only allowed ones, and a connection anywhere else is refused when it is made. Loopback, link-local (the cloud metadata address), private (RFC 1918, ULA) and the host's own addresses are never dialled unless an entry names that address or range itself. Giving it selects network mode egress, also over a policy that says host; beside --net none or host it is an error. Repeatable.",
		func(p *policy.Policy) flag.Value { return listValue{&p.AllowHosts} }},
	{"deny-host", "SPEC", "DenyHosts", "Confinement",
		"Never let the server connect to SPEC (as --allow-host takes it), even where an --allow-host covers it: deny wins. It narrows --allow-host: with none, or under --net host, it is an error. Repeatable.",
		func(p *policy.Policy) flag.Value { return listValue{&p.DenyHosts} }},
	{"resolver", "ADDR[:PORT]", "Resolver", "Confinement",
		"The DNS server mcpsandbox resolves allowed names with, on the host's side, for network mode egress (port 53 if none). Empty: the nameservers of the host's /etc/resolv.conf.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.Resolver} }},
	{"user", "NAME", "User", "Confinement",
		"Run the server as this existing host user instead of a fresh unprivileged uid.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.User} }},
	{"nofile", "N", "NoFile", "Confinement",
		"Limit on open file descriptors (RLIMIT_NOFILE) inside.",
		func(p *policy.Policy) flag.Value { return uint64Value{&p.NoFile} }},
	{"file-size", "SIZE", "FileSize", "Confinement",
		"Largest file the server may write (RLIMIT_FSIZE), in a --rw grant, /tmp or HOME alike. A write past it fails (EFBIG) or kills the server with SIGXFSZ, which is given as the restart reason. It bounds each file, not the total: a grant has no per-server quota. 0 means no limit.",
		func(p *policy.Policy) flag.Value { return &p.FileSize }},
	{"noexec-tmp", "", "NoExecTmp", "Confinement",
		"Mount /tmp and HOME noexec, as /dev/shm always is: programs the server writes there cannot be executed or mapped executable. Off by default because interpreters, npx and native npm and pip builds run what they put in /tmp and HOME.",
		func(p *policy.Policy) flag.Value { return boolValue{&p.NoExecTmp} }},
	{"tmpfs", "PATH", "Tmpfs", "Confinement",
		"Mount a private, empty tmpfs at PATH inside, sized as /tmp (--tmp-size) and gone when the server ends: for a cache or scratch directory a server insists on. Repeatable.",
		func(p *policy.Policy) flag.Value { return listValue{&p.Tmpfs} }},
	{"workdir", "DIR", "WorkDir", "Confinement",
		"The server's working directory inside, an absolute path. Paths below it are visible only where granted; the directory itself is made if nothing grants it. Default: the server's HOME.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.WorkDir} }},
	{"grant-args", "MODE", "GrantArgs", "Confinement",
		"Grant the paths among the server's arguments that exist on the host: none, ro (read-only) or rw (read-write), as --ro or --rw would. For servers whose arguments are what they serve (a filesystem server's directories).",
		func(p *policy.Policy) flag.Value { return stringValue{&p.GrantArgs} }},
	{"state", "", "State", "Confinement",
		"Give the server a private directory that persists across runs, like systemd's StateDirectory=: $XDG_STATE_HOME/mcpsandbox/NAME (~/.local/state/mcpsandbox/NAME), or /var/lib/mcpsandbox/NAME when mcpsandbox runs as root; NAME is one per server, from its launch line (npm+@scope+name for an npx package; policy explain prints it). Owned by the server's uid, mode 0700, granted read-write.",
		func(p *policy.Policy) flag.Value { return boolValue{&p.State} }},
	{"state-env", "NAME", "StateEnv", "Confinement",
		"Tell the server where its --state directory is in the variable NAME.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.StateEnv} }},
	{"env", "NAME[=VALUE]", "Env", "Confinement",
		"Pass an environment variable: NAME passes mcpsandbox's own value, NAME=VALUE sets one. Nothing else of the environment reaches the server besides a minimal PATH, HOME and LANG. Repeatable.",
		func(p *policy.Policy) flag.Value { return listValue{&p.Env} }},
	{"seccomp", "PROFILE", "Seccomp", "Confinement",
		"System call filter: default (the built-in profile) or the path of a Docker/OCI seccomp JSON profile.",
		func(p *policy.Policy) flag.Value { return stringValue{&p.Seccomp} }},
	{"seccomp-log", "", "SeccompLog", "Confinement",
		"Log system calls the filter would refuse instead of refusing them (to the kernel audit log). Helps build a profile; not a confinement.",
		func(p *policy.Policy) flag.Value { return boolValue{&p.SeccompLog} }},
	{"memory", "SIZE", "Memory", "Confinement",
		"Memory limit of the server and everything it starts (cgroup), swap off. Exceeding it kills the server and restarts it. 0 means no limit.",
		func(p *policy.Policy) flag.Value { return &p.Memory }},
	{"pids", "N", "Pids", "Confinement",
		"Limit on processes and threads of the server together (cgroup). 0 means no limit.",
		func(p *policy.Policy) flag.Value { return int64Value{&p.Pids} }},
	{"cpu", "CORES", "CPU", "Confinement",
		"CPU limit in cores, e.g. 0.5 or 2 (cgroup). 0 means no limit.",
		func(p *policy.Policy) flag.Value { return floatValue{&p.CPU} }},
}

// bindRunFlags registers every run flag on fs, writing into p.
func bindRunFlags(fs *flag.FlagSet, p *policy.Policy) {
	for _, f := range runFlags {
		fs.Var(f.Value(p), f.Name, f.Usage)
	}
}

// runOptionDocs turns the table into the OPTIONS section of `run --help`,
// with defaults taken from policy.Default so they cannot drift.
func runOptionDocs() []cmdline.Option {
	def := policy.Default()
	docs := make([]cmdline.Option, 0, len(runFlags))
	for _, f := range runFlags {
		head := "--" + f.Name
		if f.Arg != "" {
			head += " " + f.Arg
		}
		text := f.Usage
		if v := f.Value(&def).String(); v != "" && v != "false" {
			text += " Default: " + v + "."
		}
		text += " Sets Policy." + f.Field + ". In a policy file: " + policy.KeyOf(f.Field) + "."
		docs = append(docs, cmdline.Option{Group: f.Group, Flag: head, Text: text})
	}
	return docs
}
