package policy

// Key is one key of a policy file: Section.Name sets Policy.Field.
//
// Keys are kebab-case, as the flags are: a setting moved from the command
// line into a file keeps its spelling (--max-message, limits.max-message).
type Key struct {
	Section string // "" for a key at the top of the file
	Name    string
	Field   string // the Policy field it sets
	Expand  bool   // a path or environment value: ${VAR} is expanded
}

// Path is the key as a policy file and its errors write it: "limits.memory".
func (k Key) Path() string {
	if k.Section == "" {
		return k.Name
	}
	return k.Section + "." + k.Name
}

// keys is the whole mapping between files and Policy; keys_test.go checks
// it covers every field but Command (the server's command line) once.
var keys = []Key{
	{"", "unconfined", "Unconfined", false},

	{"filesystem", "ro", "ReadOnly", true},
	{"filesystem", "rw", "ReadWrite", true},
	{"filesystem", "noexec-tmp", "NoExecTmp", false},
	{"filesystem", "tmpfs", "Tmpfs", true},
	{"filesystem", "workdir", "WorkDir", true},
	{"filesystem", "args", "GrantArgs", false},

	{"state", "dir", "State", false},
	{"state", "env", "StateEnv", false},

	{"network", "mode", "Net", false},
	{"network", "allow-hosts", "AllowHosts", false},
	{"network", "deny-hosts", "DenyHosts", false},
	{"network", "resolver", "Resolver", false},

	{"env", "pass", "Env", false},
	{"env", "set", "Env", true},

	{"limits", "memory", "Memory", false},
	{"limits", "pids", "Pids", false},
	{"limits", "cpu", "CPU", false},
	{"limits", "nofile", "NoFile", false},
	{"limits", "file-size", "FileSize", false},
	{"limits", "tmp-size", "TmpSize", false},
	{"limits", "max-message", "MaxMessage", false},

	{"seccomp", "profile", "Seccomp", true},
	{"seccomp", "log", "SeccompLog", false},

	{"user", "name", "User", false},

	{"health", "ping-interval", "PingInterval", false},
	{"health", "ping-timeout", "PingTimeout", false},
	{"health", "ping-failures", "PingFailures", false},
	{"health", "start-timeout", "StartTimeout", false},

	{"restart", "mode", "Restart", false},
	{"restart", "backoff", "RestartBackoff", false},
	{"restart", "max", "MaxRestarts", false},
	{"restart", "window", "RestartWindow", false},
	{"restart", "grace", "Grace", false},

	{"mcp", "allow-tools", "AllowTools", false},
	{"mcp", "deny-tools", "DenyTools", false},
	{"mcp", "tool-prefix", "ToolPrefix", false},
	{"mcp", "call-timeout", "CallTimeout", false},
	{"mcp", "allow-prompts", "AllowPrompts", false},
	{"mcp", "deny-prompts", "DenyPrompts", false},
	{"mcp", "allow-resources", "AllowResources", false},
	{"mcp", "deny-resources", "DenyResources", false},
	{"mcp", "rate-limits", "RateLimits", false},
	{"mcp", "max-concurrent-calls", "MaxConcurrentCalls", false},
	{"mcp", "no-tool-hints", "NoToolHints", false},
	{"mcp", "approve-tools", "ApproveTools", false},
	{"mcp", "approve-annotated", "ApproveAnnotated", false},
	{"mcp", "approval-timeout", "ApprovalTimeout", false},
	{"mcp", "no-approval", "NoApproval", false},
	{"mcp", "no-secret-scan", "NoSecretScan", false},
	{"mcp", "secret-patterns", "SecretPatterns", false},

	{"server-requests", "elicitation", "ServerElicitation", false},
	{"server-requests", "sampling", "ServerSampling", false},
	{"server-requests", "roots", "ServerRoots", false},
	{"server-requests", "rate-limit", "ServerRequestLimit", false},

	{"pins", "mode", "Pin", false},
	{"pins", "lock", "Lock", true},
	{"pins", "cooldown", "Cooldown", false},
	{"pins", "overrides", "ToolOverrides", false},

	{"audit", "file", "AuditLog", true},
	{"audit", "max-size", "AuditMaxSize", false},
	{"audit", "mask", "AuditMask", false},

	{"log", "file", "LogFile", true},
	{"log", "level", "LogLevel", false},
}

// extendsKey names the file or built-in policy a file starts from.
const extendsKey = "extends"

// Keys lists every key of a policy file, in the order of the docs.
func Keys() []Key { return append([]Key(nil), keys...) }

// KeyOf names a Policy field as the policy-file key that sets it, e.g.
// "Memory" → "limits.memory"; a field no key sets is named as itself.
func KeyOf(field string) string {
	for _, k := range keys {
		if k.Field == field {
			return k.Path()
		}
	}
	return field
}

// topNames lists what a file may have at its top, in order: extends,
// top-level keys and sections (keys lists each section's keys together).
func topNames() []string {
	names := []string{extendsKey}
	for _, k := range keys {
		top := k.Section
		if top == "" {
			top = k.Name
		}
		if names[len(names)-1] != top {
			names = append(names, top)
		}
	}
	return names
}

// sectionKeys lists the keys of one section.
func sectionKeys(section string) []Key {
	var in []Key
	for _, k := range keys {
		if k.Section == section {
			in = append(in, k)
		}
	}
	return in
}
