package hostconfig

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/tailscale/hujson"
)

// Sections are the maps of servers at the top of a file: Claude Desktop's
// and Cursor's, then VS Code's mcp.json's. The daemon's file takes both.
var Sections = []string{"mcpServers", "servers"}

// SettingsSection is where a VS Code settings.json keeps servers: in its
// mcp setting. A section names its path from the top, member names joined
// by dots.
const SettingsSection = "mcp.servers"

// SectionsOf are the sections of servers of the file at path, by its name.
// In a settings.json each top-level key is a setting, so a "servers" or
// "mcpServers" there is some other program's, never a host's servers; and
// no host reads an "mcp" key in the other files. So a settings.json has
// only SettingsSection, every other file only Sections.
func SectionsOf(path string) []string {
	if filepath.Base(path) == "settings.json" {
		return []string{SettingsSection}
	}
	return Sections
}

// Kind is what an entry is, for wrapping.
type Kind int

const (
	Stdio         Kind = iota // a command the host starts: wrappable
	Remote                    // an http or sse server (a url, no command)
	HostSandboxed             // VS Code runs it in its own sandbox ("sandboxEnabled": true)
	Wrapped                   // it already runs through mcpsandbox
	Invalid                   // not an entry a host could start (Why says why)
)

func (k Kind) String() string {
	return [...]string{"stdio", "remote", "sandboxed by its host", "wrapped", "invalid"}[k]
}

// Entry is one server entry of a host's file.
type Entry struct {
	Section string // "mcpServers", "servers" or "mcp.servers"
	Name    string
	Kind    Kind
	Why     string // for Invalid: what is wrong
	Command string
	Args    []string
	Env     []string // the names of its env map, in file order
	// EnvValue are its env's values, by name: a string's contents, a
	// number's or boolean's text (hosts pass those on as text too).
	EnvValue map[string]string
	EnvFile  string
	Raw      []byte // the entry's value, exactly as in the file
	Indent   string // the indentation of the line its name starts on
	Line     int    // where its name is, 1-based
}

// Entries are the server entries of data, a file of Sections' forms (not
// a settings.json), in file order.
func Entries(data []byte) ([]Entry, error) { return entriesIn(data, Sections) }

// FileEntries are the server entries of data, the contents of the file at
// path, in the sections SectionsOf gives it.
func FileEntries(path string, data []byte) ([]Entry, error) {
	return entriesIn(data, SectionsOf(path))
}

// entriesIn are the server entries of data's sections, in file order.
func entriesIn(data []byte, sections []string) ([]Entry, error) {
	root, err := parse(data)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, section := range sections {
		sec := sectionValue(&root, section)
		if sec == nil {
			continue
		}
		obj, ok := sec.Value.(*hujson.Object)
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not an object of servers", lineAt(data, sec.StartOffset), section)
		}
		for i := range obj.Members {
			m := &obj.Members[i]
			e := Entry{Section: section, Name: m.Name.Value.(hujson.Literal).String(),
				Raw: data[m.Value.StartOffset:m.Value.EndOffset], Indent: lineIndent(data, m.Name.StartOffset), Line: lineAt(data, m.Name.StartOffset)}
			classify(&e, &m.Value)
			out = append(out, e)
		}
	}
	return out, nil
}

func classify(e *Entry, v *hujson.Value) {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		e.Kind, e.Why = Invalid, "the entry is not an object"
		return
	}
	str := func(name string) (string, bool) {
		if m := memberOf(obj, name); m != nil {
			if l, ok := m.Value.Value.(hujson.Literal); ok && l.Kind() == '"' {
				return l.String(), true
			}
		}
		return "", false
	}
	typ, _ := str("type")
	_, hasURL := str("url")
	switch {
	case typ != "" && typ != "stdio", typ == "" && hasURL:
		e.Kind = Remote
		return
	}
	if m := memberOf(obj, "sandboxEnabled"); m != nil {
		if l, ok := m.Value.Value.(hujson.Literal); ok && l.Kind() == 't' {
			e.Kind = HostSandboxed
			return
		}
	}
	cmd, ok := str("command")
	if !ok || cmd == "" {
		e.Kind, e.Why = Invalid, "it has no command"
		return
	}
	e.Command = cmd
	if m := memberOf(obj, "args"); m != nil {
		arr, ok := m.Value.Value.(*hujson.Array)
		if !ok {
			e.Kind, e.Why = Invalid, "its args is not a list"
			return
		}
		for _, a := range arr.Elements {
			l, ok := a.Value.(hujson.Literal)
			if !ok || l.Kind() != '"' {
				e.Kind, e.Why = Invalid, "its args are not all strings"
				return
			}
			e.Args = append(e.Args, l.String())
		}
	}
	if m := memberOf(obj, "env"); m != nil {
		if env, ok := m.Value.Value.(*hujson.Object); ok {
			e.EnvValue = map[string]string{}
			for _, kv := range env.Members {
				name := kv.Name.Value.(hujson.Literal).String()
				e.Env = append(e.Env, name)
				if l, ok := kv.Value.Value.(hujson.Literal); ok {
					switch l.Kind() {
					case '"':
						e.EnvValue[name] = l.String()
					case '0', 't', 'f':
						e.EnvValue[name] = string(l)
					}
				}
			}
		}
	}
	e.EnvFile, _ = str("envFile")
	if IsWrapped(e.Command, e.Args) {
		e.Kind = Wrapped
	}
}

// IsWrapped says whether a launch line already runs through mcpsandbox:
// its command is mcpsandbox (any path to it), or it starts mcpsandbox's
// run or connect (through env, sudo and the like).
func IsWrapped(command string, args []string) bool {
	if filepath.Base(command) == "mcpsandbox" {
		return true
	}
	for i, a := range args {
		if filepath.Base(a) == "mcpsandbox" && i+1 < len(args) && slices.Contains([]string{"run", "connect"}, args[i+1]) {
			return true
		}
	}
	return false
}
