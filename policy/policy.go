package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// Restart modes.
const (
	RestartAlways    = "always"
	RestartOnFailure = "on-failure"
	RestartNever     = "never"
)

// Network modes.
const (
	NetNone = "none"
	NetHost = "host"
	// NetEgress is a network of the server's own whose connections reach
	// only the hosts AllowHosts names (and DenyHosts does not), through
	// the supervisor. Giving AllowHosts selects it (SelectNet).
	NetEgress = "egress"
)

// How paths among the server's arguments are granted (GrantArgs).
const (
	GrantNone = "none"
	GrantRO   = "ro"
	GrantRW   = "rw"
)

// SeccompDefault selects the built-in seccomp profile.
const SeccompDefault = "default"

// Policy is the full description of one supervised server. The field comment
// names the `run` flag that sets it.
type Policy struct {
	// Command is the server's argv (everything after `--`).
	Command []string

	// Relay.
	MaxMessage ByteSize // --max-message

	// MCP rules, applied by the relay.
	AllowTools  []string      // --allow-tool GLOB (repeatable; none = every tool)
	DenyTools   []string      // --deny-tool GLOB (repeatable; wins over allow)
	ToolPrefix  string        // --tool-prefix P: the host sees every tool as P+name
	CallTimeout time.Duration // --call-timeout (0 = none)

	// MCP rules on prompts, resources and the tools/call budget.
	AllowPrompts       []string // --allow-prompt GLOB (repeatable; none = every prompt)
	DenyPrompts        []string // --deny-prompt GLOB (repeatable; wins over allow)
	AllowResources     []string // --allow-resource GLOB on URIs (repeatable; none = every resource)
	DenyResources      []string // --deny-resource GLOB on URIs (repeatable; wins over allow)
	RateLimits         []string // --rate-limit [GLOB=]N/DURATION (repeatable; see ParseRateLimit)
	MaxConcurrentCalls int      // --max-concurrent-calls (0 = no cap)
	NoToolHints        bool     // --no-tool-hints: add no mcpsandbox item to a failed tools/call

	// Pins: what a server is and tells the model, checked against a lock.
	Pin      string        // --pin: tofu, strict or off
	Lock     string        // --lock FILE ("" = the user's lock, or the daemon config's)
	Cooldown time.Duration // --cooldown: a version younger than this is not taken
	// ToolOverrides replace a tool's description or raise its annotations
	// for the host (and the lock): TOOL=JSON each, ParseToolOverrides.
	ToolOverrides []string // --tool-override TOOL=JSON (repeatable)

	// Approval: tools/call that wait for a person (see package
	// supervisor/approval).
	ApproveTools     []string      // --approve-tool GLOB (repeatable): these tools' calls wait for approval
	ApproveAnnotated []string      // --approve-annotated HINT (repeatable): destructive, open-world
	ApprovalTimeout  time.Duration // --approval-timeout: how long a person has to decide
	NoApproval       bool          // --no-approval: no call waits; drops every tier, the built-ins' too (resolve)
	// Secrets in a tools/call's arguments refuse the call.
	NoSecretScan   bool     // --no-secret-scan: let arguments carry secrets
	SecretPatterns []string // --secret-pattern NAME=REGEX (repeatable): more secret formats

	// The server's own requests to the host: allow, deny or decline each.
	ServerElicitation  string // --server-elicitation MODE
	ServerSampling     string // --server-sampling MODE
	ServerRoots        string // --server-roots MODE
	ServerRequestLimit string // --server-request-limit N/DURATION ("" = none)

	// Audit log of the host's tools/call, prompts/get and resources/read.
	AuditLog     string   // --audit-log FILE ("" = none)
	AuditMaxSize ByteSize // --audit-max-size: rotate past it (0 = never)
	AuditMask    []string // --audit-mask GLOB (repeatable): more secret key names

	// Logging of the supervisor itself.
	LogFile  string // --log-file
	LogLevel string // --log-level: debug, info, warn, error

	// Heartbeat.
	PingInterval time.Duration // --ping-interval (0 disables)
	PingTimeout  time.Duration // --ping-timeout
	PingFailures int           // --ping-failures
	// StartTimeout bounds the wait for the server's answer to the host's
	// initialize (or stateless server/discover): past it mcpsandbox answers
	// with an error naming the hosts the server was denied, if any.
	StartTimeout time.Duration // --start-timeout (0 = none)

	// Restart.
	Restart        string        // --restart
	RestartBackoff Backoff       // --restart-backoff MIN..MAX
	MaxRestarts    int           // --max-restarts
	RestartWindow  time.Duration // --restart-window
	Grace          time.Duration // --grace

	// Confinement.
	Unconfined bool     // --unconfined
	ReadOnly   []string // --ro PATH (repeatable)
	ReadWrite  []string // --rw PATH (repeatable)
	TmpSize    ByteSize // --tmp-size
	Net        string   // --net none|host|egress
	AllowHosts []string // --allow-host SPEC (repeatable; HostSpec): the hosts egress reaches
	DenyHosts  []string // --deny-host SPEC (repeatable): never reached; wins over allow
	Resolver   string   // --resolver ADDR[:PORT]: the host-side DNS server for allowed names ("" = the host's /etc/resolv.conf)
	User       string   // --user NAME
	NoFile     uint64   // --nofile
	FileSize   ByteSize // --file-size (0 = unlimited)
	NoExecTmp  bool     // --noexec-tmp
	Tmpfs      []string // --tmpfs PATH (repeatable): a private, empty tmpfs there
	WorkDir    string   // --workdir DIR: the server's working directory ("" = its HOME)
	GrantArgs  string   // --grant-args none|ro|rw: existing paths among the arguments
	State      bool     // --state: a private persistent directory (StateDir)
	StateEnv   string   // --state-env NAME: the variable that gives the server its path
	Env        []string // --env NAME or NAME=VALUE (repeatable)
	Seccomp    string   // --seccomp default|FILE
	SeccompLog bool     // --seccomp-log
	Memory     ByteSize // --memory
	Pids       int64    // --pids
	CPU        float64  // --cpu (cores, 0 = unlimited)
}

// Default returns the policy `mcpsandbox run` uses when no flag is given.
func Default() Policy {
	return Policy{
		MaxMessage:         16 * MiB,
		LogLevel:           "info",
		PingInterval:       15 * time.Second,
		PingTimeout:        5 * time.Second,
		PingFailures:       3,
		StartTimeout:       45 * time.Second, // below hosts' 60 s; a cold npx start under emulation takes 20-40 s
		Restart:            RestartOnFailure,
		RestartBackoff:     Backoff{Min: 100 * time.Millisecond, Max: 30 * time.Second},
		MaxRestarts:        5,
		RestartWindow:      time.Minute,
		Grace:              2 * time.Second,
		Pin:                PinTOFU,
		Cooldown:           48 * time.Hour,  // long enough for a bad release to be noticed and yanked
		ApprovalTimeout:    2 * time.Minute, // hosts' own request timeouts run meanwhile (TypeScript SDK: 60 s, reset by progress)
		ServerElicitation:  ServerRequestAllow,
		ServerSampling:     ServerRequestAllow,
		ServerRoots:        ServerRequestAllow,
		ServerRequestLimit: "30/1m",
		TmpSize:            64 * MiB,
		Net:                NetNone,
		NoFile:             1024,
		GrantArgs:          GrantNone,
		Seccomp:            SeccompDefault,
		Memory:             1 * GiB,
		Pids:               256,
		AuditMaxSize:       10 * MiB,
	}
}

// Validate reports the first field that makes no sense, as a *field.Error
// naming the field and the fix; the caller names the field for its user
// (the CLI as --flag).
func (p *Policy) Validate() error { return p.validate(false) }

// validate is Validate; hostsUnknown says the allow list may lack hosts
// that the server's arguments, unknown here, would give (policy check).
func (p *Policy) validate(hostsUnknown bool) error {
	bad := func(f, value, problem, fix string) error {
		return &field.Error{Field: f, Value: value, Problem: problem, Fix: fix}
	}
	switch {
	case len(p.Command) == 0:
		return bad("Command", "", "no server command: put it {Command}", "e.g. node server.js")
	case p.MaxMessage < 1024:
		return bad("MaxMessage", p.MaxMessage.String(), "is too small", "use at least 1KiB (default "+Default().MaxMessage.String()+")")
	case p.PingInterval < 0:
		return bad("PingInterval", p.PingInterval.String(), "must not be negative", "use 0 to turn pings off")
	case p.StartTimeout < 0:
		return bad("StartTimeout", p.StartTimeout.String(), "must not be negative", "0 means no bound, e.g. 45s")
	case p.PingTimeout < 0:
		return bad("PingTimeout", p.PingTimeout.String(), "must not be negative", "e.g. 5s")
	case p.PingInterval > 0 && p.PingTimeout <= 0:
		return bad("PingTimeout", "", fmt.Sprintf("must be positive while pings are on ({PingInterval} %s)", p.PingInterval), "e.g. 5s")
	case p.PingInterval > 0 && p.PingFailures < 1:
		return bad("PingFailures", strconv.Itoa(p.PingFailures), "must be at least 1", "e.g. 3")
	case p.Restart != RestartAlways && p.Restart != RestartOnFailure && p.Restart != RestartNever:
		return bad("Restart", strconv.Quote(p.Restart), "is no restart mode", "use always, on-failure or never")
	case p.RestartBackoff.Min <= 0 || p.RestartBackoff.Max < p.RestartBackoff.Min:
		return bad("RestartBackoff", p.RestartBackoff.String(), "is no backoff", "use MIN..MAX with 0 < MIN <= MAX, e.g. 100ms..30s")
	case p.MaxRestarts < 0:
		return bad("MaxRestarts", strconv.Itoa(p.MaxRestarts), "must not be negative", "0 means no limit")
	case p.RestartWindow <= 0:
		return bad("RestartWindow", p.RestartWindow.String(), "must be positive", "e.g. 1m")
	case p.Grace < 0:
		return bad("Grace", p.Grace.String(), "must not be negative", "e.g. 2s")
	case p.TmpSize <= 0:
		return bad("TmpSize", p.TmpSize.String(), "must be positive", "e.g. 64MiB")
	case p.FileSize < 0:
		return bad("FileSize", p.FileSize.String(), "must not be negative", "0 means no limit")
	case p.Memory < 0:
		return bad("Memory", p.Memory.String(), "must not be negative", "0 means no limit")
	case p.Pids < 0:
		return bad("Pids", strconv.FormatInt(p.Pids, 10), "must not be negative", "0 means no limit")
	case p.CPU < 0:
		return bad("CPU", strconv.FormatFloat(p.CPU, 'g', -1, 64), "must not be negative", "0 means no limit")
	case p.Seccomp == "":
		return bad("Seccomp", "", "is empty", "use default or the path of a Docker/OCI seccomp JSON profile")
	case p.GrantArgs != GrantNone && p.GrantArgs != GrantRO && p.GrantArgs != GrantRW:
		return bad("GrantArgs", strconv.Quote(p.GrantArgs), "is no grant mode", "use none, ro or rw")
	case p.WorkDir != "" && !strings.HasPrefix(p.WorkDir, "/"):
		return bad("WorkDir", strconv.Quote(p.WorkDir), "must be an absolute path", "e.g. ${PWD} in a policy file")
	case p.StateEnv != "" && !p.State:
		return bad("StateEnv", p.StateEnv, "names the state directory's variable, but the state directory is off", "turn it on with {State}")
	case p.StateEnv != "" && !validEnvName(p.StateEnv):
		return bad("StateEnv", strconv.Quote(p.StateEnv), "is no variable name", "use letters, digits and _, e.g. MCP_STATE_DIR")
	case !validToolPrefix(p.ToolPrefix):
		return bad("ToolPrefix", strconv.Quote(p.ToolPrefix), "holds a character tool names cannot", "use letters, digits, _ - and . (e.g. github_)")
	case p.CallTimeout < 0:
		return bad("CallTimeout", p.CallTimeout.String(), "must not be negative", "0 means no timeout")
	case p.Pin != PinTOFU && p.Pin != PinStrict && p.Pin != PinOff:
		return bad("Pin", strconv.Quote(p.Pin), "is no pin mode", "use tofu (pin what is first seen), strict (refuse a server the lock does not pin) or off (only log)")
	case p.Lock != "" && !strings.HasPrefix(p.Lock, "/"):
		return bad("Lock", strconv.Quote(p.Lock), "must be an absolute path", "e.g. ${PWD}/mcpsandbox.lock.json in a policy file")
	case p.Cooldown < 0:
		return bad("Cooldown", p.Cooldown.String(), "must not be negative", "0 takes a version however new it is")
	case p.ApprovalTimeout <= 0:
		return bad("ApprovalTimeout", p.ApprovalTimeout.String(), "must be positive", "e.g. 2m: a person has that long to approve a call")
	case p.AuditMaxSize < 0:
		return bad("AuditMaxSize", p.AuditMaxSize.String(), "must not be negative", "0 means the audit log is never rotated")
	case p.AuditLog != "" && p.AuditLog == p.LogFile:
		return bad("AuditLog", strconv.Quote(p.AuditLog), "is also {LogFile}", "give the audit log a file of its own")
	case p.MaxConcurrentCalls < 0:
		return bad("MaxConcurrentCalls", strconv.Itoa(p.MaxConcurrentCalls), "must not be negative", "0 means no cap")
	case p.NoFile < 16:
		return bad("NoFile", strconv.FormatUint(p.NoFile, 10), "is too small for any server", "use at least 16")
	}
	switch p.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return bad("LogLevel", strconv.Quote(p.LogLevel), "is no log level", "use debug, info, warn or error")
	}
	for _, list := range []struct {
		field string
		globs []string
	}{{"AllowTools", p.AllowTools}, {"DenyTools", p.DenyTools}, {"AllowPrompts", p.AllowPrompts}, {"DenyPrompts", p.DenyPrompts},
		{"AllowResources", p.AllowResources}, {"DenyResources", p.DenyResources}, {"AuditMask", p.AuditMask},
		{"ApproveTools", p.ApproveTools}} {
		for _, g := range list.globs {
			if !ValidGlob(g) {
				return bad(list.field, strconv.Quote(g), "is no glob", "use * for any run of characters, ? for one, [a-z] for a class; \\ quotes")
			}
		}
	}
	if err := p.validateNet(hostsUnknown); err != nil {
		return err
	}
	for _, s := range p.RateLimits {
		if _, err := ParseRateLimit(s); err != nil {
			return &field.Error{Field: "RateLimits", Value: strconv.Quote(s), Problem: "is no rate limit: " + err.Error(), Fix: rateLimitFix}
		}
	}
	if err := p.validateApproval(); err != nil {
		return err
	}
	for _, s := range p.ToolOverrides {
		if _, _, err := ParseToolOverride(s); err != nil {
			return &field.Error{Field: "ToolOverrides", Value: strconv.Quote(s), Problem: err.Error()}
		}
	}
	for _, e := range p.Env {
		if name, _, _ := strings.Cut(e, "="); !validEnvName(name) {
			return bad("Env", strconv.Quote(e), "is no variable", "use NAME or NAME=VALUE, NAME of letters, digits and _")
		}
	}
	for _, t := range p.Tmpfs {
		if !strings.HasPrefix(t, "/") {
			return bad("Tmpfs", strconv.Quote(t), "must be an absolute path", "e.g. /var/cache/app")
		}
	}
	return nil
}

// validEnvName: a portable variable name (POSIX: letters, digits, _, not
// starting with a digit).
func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
