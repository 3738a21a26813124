package config

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// An envFile holds NAME=VALUE lines, as VS Code reads one: blank lines and
// # comments skipped, an optional "export " before the name, a value in
// double quotes (with \n, \t, \" and \\) or single quotes (as written), or
// bare, trimmed and cut at " #". It is read when the configuration is.

type envVar struct {
	name, value string
}

// readEnvFile reads the env file at path (errors name it as shown).
func readEnvFile(path, shown string) ([]envVar, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errors.New("no such file " + path)
		}
		return nil, err
	}
	var vars []envVar
	for i, line := range strings.Split(string(data), "\n") {
		at := func(col int, problem, fix string) error {
			return &policy.FileError{Pos: policy.Pos{File: shown, Line: i + 1, Col: col}, Err: &field.Error{Problem: problem, Fix: fix}}
		}
		line = strings.TrimSuffix(line, "\r")
		body := strings.TrimLeft(line, " \t")
		col := len(line) - len(body) + 1
		if body == "" || body[0] == '#' {
			continue
		}
		if rest, ok := strings.CutPrefix(body, "export "); ok {
			trimmed := strings.TrimLeft(rest, " \t")
			col += len(body) - len(trimmed)
			body = trimmed
		}
		rawName, rawValue, ok := strings.Cut(body, "=")
		name := strings.TrimRight(rawName, " \t")
		if !ok {
			return nil, at(col, "a line of an env file is NAME=VALUE", "e.g. API_KEY=secret; # starts a comment")
		}
		if !validEnvName(name) {
			return nil, at(col, strconv.Quote(name)+" is no variable name", "use letters, digits and _, e.g. API_KEY")
		}
		value := strings.TrimLeft(rawValue, " \t")
		valCol := col + len(rawName) + 1 + len(rawValue) - len(value)
		v, err := envValue(value)
		if err != nil {
			return nil, at(valCol, name+": "+err.Error(), "close the quote on the same line")
		}
		vars = append(vars, envVar{name, v})
	}
	return vars, nil
}

// envValue reads one value of an env file.
func envValue(s string) (string, error) {
	switch {
	case strings.HasPrefix(s, `"`):
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			switch c := s[i]; {
			case c == '"':
				return b.String(), nil
			case c == '\\' && i+1 < len(s):
				i++
				switch s[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'r':
					b.WriteByte('\r')
				default:
					b.WriteByte(s[i])
				}
			default:
				b.WriteByte(c)
			}
		}
		return "", errors.New("the value's \" is not closed")
	case strings.HasPrefix(s, "'"):
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return "", errors.New("the value's ' is not closed")
		}
		return s[1 : 1+end], nil
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, " \t"), nil
}
