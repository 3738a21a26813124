package policy

// flags names each Policy field but Command by the `mcpsandbox run` flag
// that sets it, without dashes. The run command's flag table is the one
// that defines the flags; this copy lets what cannot import the command
// (the demo) name fields the same way, and a test of the command holds the
// two equal.
var flags = map[string]string{
	"MaxMessage":         "max-message",
	"AllowTools":         "allow-tool",
	"DenyTools":          "deny-tool",
	"ToolPrefix":         "tool-prefix",
	"CallTimeout":        "call-timeout",
	"AllowPrompts":       "allow-prompt",
	"DenyPrompts":        "deny-prompt",
	"AllowResources":     "allow-resource",
	"DenyResources":      "deny-resource",
	"RateLimits":         "rate-limit",
	"MaxConcurrentCalls": "max-concurrent-calls",
	"NoToolHints":        "no-tool-hints",
	"Pin":                "pin",
	"Lock":               "lock",
	"Cooldown":           "cooldown",
	"ToolOverrides":      "tool-override",
	"ApproveTools":       "approve-tool",
	"ApproveAnnotated":   "approve-annotated",
	"ApprovalTimeout":    "approval-timeout",
	"NoApproval":         "no-approval",
	"NoSecretScan":       "no-secret-scan",
	"SecretPatterns":     "secret-pattern",
	"ServerElicitation":  "server-elicitation",
	"ServerSampling":     "server-sampling",
	"ServerRoots":        "server-roots",
	"ServerRequestLimit": "server-request-limit",
	"AuditLog":           "audit-log",
	"AuditMaxSize":       "audit-max-size",
	"AuditMask":          "audit-mask",
	"LogFile":            "log-file",
	"LogLevel":           "log-level",
	"PingInterval":       "ping-interval",
	"PingTimeout":        "ping-timeout",
	"PingFailures":       "ping-failures",
	"StartTimeout":       "start-timeout",
	"Restart":            "restart",
	"RestartBackoff":     "restart-backoff",
	"MaxRestarts":        "max-restarts",
	"RestartWindow":      "restart-window",
	"Grace":              "grace",
	"Unconfined":         "unconfined",
	"ReadOnly":           "ro",
	"ReadWrite":          "rw",
	"TmpSize":            "tmp-size",
	"Net":                "net",
	"AllowHosts":         "allow-host",
	"DenyHosts":          "deny-host",
	"Resolver":           "resolver",
	"User":               "user",
	"NoFile":             "nofile",
	"FileSize":           "file-size",
	"NoExecTmp":          "noexec-tmp",
	"Tmpfs":              "tmpfs",
	"WorkDir":            "workdir",
	"GrantArgs":          "grant-args",
	"State":              "state",
	"StateEnv":           "state-env",
	"Env":                "env",
	"Seccomp":            "seccomp",
	"SeccompLog":         "seccomp-log",
	"Memory":             "memory",
	"Pids":               "pids",
	"CPU":                "cpu",
}

// FlagOf names a Policy field as the run flag that sets it, e.g.
// "DenyTools" → "--deny-tool"; a field no flag sets is named as itself.
func FlagOf(field string) string {
	if f, ok := flags[field]; ok {
		return "--" + f
	}
	return field
}
