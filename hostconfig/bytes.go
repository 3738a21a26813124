package hostconfig

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

func parse(data []byte) (hujson.Value, error) {
	v, err := hujson.Parse(data)
	if err != nil {
		return v, fmt.Errorf("not JSON (with comments): %v", err)
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return v, fmt.Errorf("not a JSON object")
	}
	return v, nil
}

// member is the value of root's member name, nil without one.
func member(root *hujson.Value, name string) *hujson.Value {
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil
	}
	if m := memberOf(obj, name); m != nil {
		return &m.Value
	}
	return nil
}

func memberOf(obj *hujson.Object, name string) *hujson.ObjectMember {
	if i := memberIndex(obj, name); i >= 0 {
		return &obj.Members[i]
	}
	return nil
}

func memberIndex(obj *hujson.Object, name string) int {
	for i, m := range obj.Members {
		if l, ok := m.Name.Value.(hujson.Literal); ok && l.String() == name {
			return i
		}
	}
	return -1
}

// sectionValue is the value at section's path of member names (e.g.
// "mcp.servers"), nil where a member along it is missing.
func sectionValue(root *hujson.Value, section string) *hujson.Value {
	v := root
	for name := range strings.SplitSeq(section, ".") {
		if v = member(v, name); v == nil {
			return nil
		}
	}
	return v
}

func entryValue(root hujson.Value, section, name string) (*hujson.Value, error) {
	sec := sectionValue(&root, section)
	if sec == nil {
		return nil, fmt.Errorf("there is no %s", section)
	}
	v := member(sec, name)
	if v == nil {
		return nil, fmt.Errorf("there is no server %q in %s", name, section)
	}
	return v, nil
}

// trimmed is v's bytes without the whitespace and comments around it.
func trimmed(v hujson.Value) []byte {
	v.BeforeExtra, v.AfterExtra = nil, nil
	return v.Pack()
}

func splice(data []byte, start, end int, with []byte) []byte {
	return append(append(append([]byte{}, data[:start]...), with...), data[end:]...)
}

func lineAt(data []byte, off int) int { return 1 + bytes.Count(data[:off], []byte("\n")) }

// lineIndent is the leading blanks of the line off is on.
func lineIndent(data []byte, off int) string {
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	end := start
	for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

// breakIndent is the line break and indentation that end extra, or dflt
// when extra has no line break.
func breakIndent(extra hujson.Extra, dflt string) hujson.Extra {
	nl, indent := splitBreak(extra, "", "")
	if nl == "" {
		if dflt == "" {
			return nil
		}
		return hujson.Extra(dflt)
	}
	return hujson.Extra(nl + indent)
}

// splitBreak is the last line break of extra and the blanks after it.
func splitBreak(extra hujson.Extra, nl, indent string) (string, string) {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return nl, indent
	}
	nl = "\n"
	if i > 0 && extra[i-1] == '\r' {
		nl = "\r\n"
	}
	return nl, strings.TrimLeft(string(extra[i+1:]), "\r")
}

// lineBreak is the file's line break.
func lineBreak(data []byte) string {
	if bytes.Contains(data, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// indentUnit is the indentation of the file's first indented line: one
// level, in the file's own blanks.
func indentUnit(data []byte) string {
	for line := range bytes.Lines(data) {
		blank := len(line) - len(bytes.TrimLeft(line, " \t"))
		if blank > 0 && len(bytes.TrimSpace(line)) > 0 {
			return string(line[:blank])
		}
	}
	return "  "
}

// reindent moves the lines of raw after the first from the indentation
// from to to, each level of raw's own (the first one it indents by) one of
// unit, with line breaks nl.
func reindent(raw []byte, from, to, unit, nl string) []byte {
	lines := strings.Split(string(raw), "\n")
	rawUnit := ""
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
		if i == 0 {
			continue
		}
		rest, ok := strings.CutPrefix(lines[i], from)
		if !ok {
			lines[i] = to + strings.TrimLeft(lines[i], " \t")
			continue
		}
		body := strings.TrimLeft(rest, " \t")
		extra := rest[:len(rest)-len(body)]
		if rawUnit == "" && extra != "" {
			rawUnit = extra
		}
		levels := 0
		if rawUnit != "" {
			levels = len(extra) / len(rawUnit)
		}
		lines[i] = to + strings.Repeat(unit, levels) + body
	}
	return []byte(strings.Join(lines, nl))
}
