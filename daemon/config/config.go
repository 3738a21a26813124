package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Config is the daemon's configuration file, read.
type Config struct {
	File    string   // the absolute path it was read from
	Servers []Server // the stdio servers, in file order
	Users   []User   // who may connect to a server whose entry names none (mcpsandbox.users)
	// Warnings are FILE:LINE:COL notes on what the daemon leaves aside
	// (an http or sse server, VS Code's dev mode), for the caller to log.
	Warnings []string
}

// Server is one entry: what to run, and mcpsandbox's settings for it.
type Server struct {
	Name    string
	Pos     policy.Pos // where its entry starts (its name), for messages
	Command []string   // command then args, as the entry gives them (variables expanded)
	Cwd     string     // absolute; "" when not given (the daemon then uses the config's directory)
	// Policy is the policy reference: a file (made absolute, relative to
	// the config's directory) or a built-in; "" chooses from the launch
	// line, as run does without --policy.
	Policy string
	// Overrides are the settings the entry gives over its policy (env,
	// inline policy keys, VS Code sandbox settings), in the fields Given
	// names: resolve.Request's Overrides and Given.
	Overrides    policy.Policy
	Given        []string
	Origin       policy.Origin // where the entry sets each field of Given, and "Policy" the reference (Place)
	Prestart     int           // warm instances kept (default 0)
	MaxInstances int           // instances at once, prestarted ones counted (default 16)
	Users        []User        // who may connect; empty: Config.Users; both empty: only the daemon's own uid
	Disabled     bool          // "disabled": true: kept in the file, not run
	// Limits are what the entry refuses the server that Overrides cannot
	// say (VS Code's sandbox allow lists, env null): Narrow applies them
	// to the resolved policy.
	Limits Limits
	// Raw is the entry's settings in canonical bytes: equal Raw and equal
	// resolved policy mean the server did not change (reload).
	Raw []byte
}

// DefaultMaxInstances bounds a server's instances when its entry does not.
const DefaultMaxInstances = 16

// Load reads the configuration file at path: Parse of its contents. Its
// only effects are reading that file and the env files it names.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &field.Error{Value: path, Problem: "no such configuration file", Fix: "give the daemon's configuration with --config FILE"}
		}
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads data, the configuration file named file (relative paths in
// it are relative to file's directory). Errors are *policy.FileError at
// file's line and column. ${userHome} and ${env:NAME} are read from this
// process's environment: the daemon's.
func Parse(file string, data []byte) (*Config, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	r := &reader{file: file, dir: filepath.Dir(abs), env: environ{home: home, lookup: os.LookupEnv}}
	r.workspace = workspaceOf(r.dir, home)
	c, err := r.read(data)
	if err != nil {
		return nil, err
	}
	c.File = abs
	return c, nil
}

// Server is the server named name.
func (c *Config) Server(name string) (*Server, bool) {
	for i := range c.Servers {
		if c.Servers[i].Name == name {
			return &c.Servers[i], true
		}
	}
	return nil, false
}

// AllowedUsers are who may connect to s: its own users, else the file's
// (both empty: none but the daemon's own uid, which the caller adds).
func (c *Config) AllowedUsers(s *Server) []User {
	if len(s.Users) > 0 {
		return s.Users
	}
	return c.Users
}
