package policy

import (
	"fmt"
	"time"
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

	// Logging of the supervisor itself.
	LogFile  string // --log-file
	LogLevel string // --log-level: debug, info, warn, error

	// Heartbeat.
	PingInterval time.Duration // --ping-interval (0 disables)
	PingTimeout  time.Duration // --ping-timeout
	PingFailures int           // --ping-failures

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
	Net        string   // --net none|host
	User       string   // --user NAME
	NoFile     uint64   // --nofile
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
		MaxMessage:     16 * MiB,
		LogLevel:       "info",
		PingInterval:   15 * time.Second,
		PingTimeout:    5 * time.Second,
		PingFailures:   3,
		Restart:        RestartOnFailure,
		RestartBackoff: Backoff{Min: 100 * time.Millisecond, Max: 30 * time.Second},
		MaxRestarts:    5,
		RestartWindow:  time.Minute,
		Grace:          2 * time.Second,
		TmpSize:        64 * MiB,
		Net:            NetNone,
		NoFile:         1024,
		Seccomp:        SeccompDefault,
		Memory:         1 * GiB,
		Pids:           256,
	}
}

// Validate reports the first field that makes no sense, naming the flag and
// the fix.
func (p *Policy) Validate() error {
	switch {
	case len(p.Command) == 0:
		return fmt.Errorf("no server command: put it after --, e.g. mcpsandbox run -- node server.js")
	case p.MaxMessage < 1024:
		return fmt.Errorf("--max-message %s is too small: use at least 1KiB (default 16MiB)", p.MaxMessage)
	case p.PingInterval < 0 || p.PingTimeout < 0:
		return fmt.Errorf("--ping-interval and --ping-timeout must not be negative (0 disables pings)")
	case p.PingInterval > 0 && p.PingTimeout <= 0:
		return fmt.Errorf("--ping-timeout must be positive while pings are on (--ping-interval %s)", p.PingInterval)
	case p.PingInterval > 0 && p.PingFailures < 1:
		return fmt.Errorf("--ping-failures must be at least 1 (got %d)", p.PingFailures)
	case p.Restart != RestartAlways && p.Restart != RestartOnFailure && p.Restart != RestartNever:
		return fmt.Errorf("--restart %q: use always, on-failure or never", p.Restart)
	case p.RestartBackoff.Min <= 0 || p.RestartBackoff.Max < p.RestartBackoff.Min:
		return fmt.Errorf("--restart-backoff %s: use MIN..MAX with 0 < MIN <= MAX, e.g. 100ms..30s", p.RestartBackoff)
	case p.MaxRestarts < 0:
		return fmt.Errorf("--max-restarts must not be negative (0 means no limit)")
	case p.RestartWindow <= 0:
		return fmt.Errorf("--restart-window must be positive, e.g. 1m")
	case p.Grace < 0:
		return fmt.Errorf("--grace must not be negative")
	case p.Net != NetNone && p.Net != NetHost:
		return fmt.Errorf("--net %q: use none or host", p.Net)
	case p.TmpSize <= 0:
		return fmt.Errorf("--tmp-size must be positive, e.g. 64MiB")
	case p.Memory < 0 || p.Pids < 0 || p.CPU < 0:
		return fmt.Errorf("--memory, --pids and --cpu must not be negative (0 = no limit)")
	case p.Seccomp == "":
		return fmt.Errorf("--seccomp is empty: use default or the path of a Docker/OCI seccomp JSON profile")
	case p.NoFile < 16:
		return fmt.Errorf("--nofile %d is too small for any server: use at least 16", p.NoFile)
	}
	switch p.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("--log-level %q: use debug, info, warn or error", p.LogLevel)
	}
	for _, e := range p.Env {
		if e == "" || e[0] == '=' {
			return fmt.Errorf("--env %q: use NAME or NAME=VALUE", e)
		}
	}
	return nil
}
