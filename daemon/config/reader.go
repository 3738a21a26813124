package config

import (
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// reader reads one configuration file.
type reader struct {
	file      string // as errors name it
	dir       string // its absolute directory: relative paths start here
	workspace string // ${workspaceFolder}: "" when the file is in none
	env       environ
	warnings  []string
}

// The top of the file.
const (
	keyClaude   = "mcpServers" // Claude Desktop, Cursor
	keyVSCode   = "servers"    // VS Code's mcp.json
	keyInputs   = "inputs"     // VS Code's prompts for ${input:...}
	keySandbox  = "sandbox"    // VS Code's sandbox settings for every sandboxed server of the file
	keyOwn      = "mcpsandbox" // mcpsandbox's own settings
	keyOwnUsers = "users"
)

var topKeys = []string{keyClaude, keyVSCode, keyInputs, keySandbox, keyOwn}

func (r *reader) fail(n ast.Node, problem, fix string) error { return fail(r.file, n, problem, fix) }

func (r *reader) warn(n ast.Node, msg string) {
	r.warnings = append(r.warnings, posOf(r.file, n).String()+": "+msg)
}

func (r *reader) read(data []byte) (*Config, error) {
	top, err := parseFile(r.file, data)
	if err != nil {
		return nil, err
	}
	shape := `e.g. {"mcpServers": {"NAME": {"command": "npx", "args": ["-y", "PACKAGE"]}}}`
	if top == nil {
		return nil, &policy.FileError{Pos: policy.Pos{File: r.file, Line: 1, Col: 1}, Err: &field.Error{Problem: "the file is empty", Fix: shape}}
	}
	list, ok := entries(top)
	if !ok {
		return nil, r.fail(top, "the configuration is a JSON object, not "+kind(top), shape)
	}
	c := &Config{}
	var maps []*ast.MappingValueNode
	var rootSandbox ast.Node
	for _, kv := range list {
		switch name := keyName(kv); name {
		case keyClaude, keyVSCode:
			maps = append(maps, kv)
		case keyInputs:
			// Only what they are for is refused: ${input:ID} in a value.
		case keySandbox:
			rootSandbox = kv.Value
		case keyOwn:
			if c.Users, err = r.own(kv); err != nil {
				return nil, err
			}
		default:
			return nil, r.fail(kv.Key, "unknown key "+strconv.Quote(name), suggest(name, topKeys, "the top of the file"))
		}
	}
	if rootSandbox != nil && !isNull(rootSandbox) {
		// Checked once here, so that a mistake in it shows even while no
		// server is sandboxed.
		check := &entry{reader: r, keys: map[string]*ast.MappingValueNode{}, o: overrides{given: map[string]bool{}, origin: policy.Origin{}}}
		if err := check.sandboxObject(rootSandbox); err != nil {
			return nil, err
		}
	}
	if len(maps) == 0 {
		return nil, r.fail(top, "no servers: the file has neither mcpServers nor servers", shape)
	}
	first := map[string]policy.Pos{}
	for _, m := range maps {
		servers, ok := entries(m.Value)
		if !ok {
			if isNull(m.Value) {
				continue
			}
			return nil, r.fail(m.Value, keyName(m)+" must be an object of named servers, not "+kind(m.Value), shape)
		}
		for _, kv := range servers {
			name := keyName(kv)
			if at, dup := first[name]; dup {
				return nil, r.fail(kv.Key, "server "+strconv.Quote(name)+" is defined twice (first at "+at.String()+")", "rename or delete one of them")
			}
			first[name] = posOf(r.file, kv.Key)
			s, skip, err := r.server(kv, rootSandbox)
			if err != nil {
				return nil, err
			}
			if !skip {
				c.Servers = append(c.Servers, s)
			}
		}
	}
	sort.SliceStable(c.Servers, func(i, j int) bool { return before(c.Servers[i].Pos, c.Servers[j].Pos) })
	for i := range c.Servers {
		if err := c.Servers[i].canonical(c.Users); err != nil {
			return nil, err
		}
	}
	c.Warnings = r.warnings
	return c, nil
}

func before(a, b policy.Pos) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
}

// own reads the top-level mcpsandbox object.
func (r *reader) own(kv *ast.MappingValueNode) ([]User, error) {
	list, ok := entries(kv.Value)
	if !ok {
		return nil, r.fail(kv.Value, "mcpsandbox must be an object of mcpsandbox's settings", `e.g. "mcpsandbox": {"users": ["alice", 1001]}`)
	}
	var users []User
	for _, e := range list {
		name := keyName(e)
		if name != keyOwnUsers {
			return nil, r.fail(e.Key, "unknown key "+strconv.Quote(name)+" in mcpsandbox", suggest(name, []string{keyOwnUsers}, "mcpsandbox"))
		}
		var err error
		if users, err = r.users(e); err != nil {
			return nil, err
		}
	}
	return users, nil
}

// suggest is the hint for an unknown key: the closest of names, else the
// list of them.
func suggest(bad string, names []string, where string) string {
	best, bestDist := "", 3
	for _, n := range names {
		if d := field.EditDistance(strings.ToLower(bad), strings.ToLower(n)); d < bestDist && d < len(bad) {
			best, bestDist = n, d
		}
	}
	if best != "" {
		return "did you mean " + best + "?"
	}
	return "the keys of " + where + " are " + strings.Join(names, ", ")
}
