package config

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// envSetting is one variable the entry sets ("NAME=VALUE", or the bare
// NAME the daemon passes its own value of) or, unset, takes away.
type envSetting struct {
	name, kv string
	unset    bool
	at       ast.Node
}

// env reads envFile, then env over it (as VS Code does), into
// Overrides.Env after what the entry's policy sets; a variable given
// null goes to Limits.Unset.
func (e *entry) env() error {
	fromFile, err := e.envFile()
	if err != nil {
		return err
	}
	given, err := e.envObject()
	if err != nil {
		return err
	}
	var settings []envSetting
	for _, v := range fromFile {
		if !slices.ContainsFunc(given, func(s envSetting) bool { return s.name == v.name }) {
			settings = append(settings, v)
		}
	}
	settings = append(settings, given...)
	inPolicy := func(name string) bool {
		return slices.ContainsFunc(e.o.p.Env, func(own string) bool { n, _, _ := strings.Cut(own, "="); return n == name })
	}
	var env []string
	for _, st := range settings {
		switch {
		case inPolicy(st.name) && st.unset:
			return e.fail(st.at, "env "+st.name+": null unsets the variable, but the server's policy sets it", "keep one of them")
		case inPolicy(st.name):
			return e.fail(st.at, st.name+" is set both by the server's env and by its policy's env", "keep one of them")
		case st.unset:
			e.s.Limits.Unset = append(e.s.Limits.Unset, Item{st.name, posOf(e.file, st.at)})
		default:
			env = append(env, st.kv)
		}
	}
	if len(env) > 0 {
		e.o.p.Env = append(e.o.p.Env, env...)
		e.o.set("Env", posOf(e.file, settings[0].at))
	}
	return nil
}

// envFile reads the entry's envFile, if it names one.
func (e *entry) envFile() ([]envSetting, error) {
	m := e.keys[keyEnvFile]
	if m == nil {
		return nil, nil
	}
	s, ok := str(m.Value)
	if !ok {
		return nil, e.fail(m.Value, "envFile must be a string, not "+kind(m.Value), "give the path of a file of NAME=VALUE lines")
	}
	path, err := e.path(m.Value, s, e.dir)
	if err != nil {
		return nil, err
	}
	shown := path // its errors name it as the configuration's are named
	if rel, err := filepath.Rel(e.dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		shown = filepath.Join(filepath.Dir(e.file), rel)
	}
	vars, err := readEnvFile(path, shown)
	if err != nil {
		var fe *policy.FileError
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, placed(e.file, m.Value, &field.Error{Problem: "envFile", Err: err, Fix: "give the path of a file of NAME=VALUE lines, relative to " + e.dir})
	}
	var out []envSetting
	for _, v := range vars {
		out = append(out, envSetting{name: v.name, kv: v.name + "=" + v.value, at: m.Value})
	}
	return out, nil
}

// envObject reads the entry's env: a string or a number sets the
// variable, "${env:NAME}" as NAME's own value passes the daemon's NAME on
// at each start (as `run --env NAME` does), null takes it away.
func (e *entry) envObject() ([]envSetting, error) {
	m := e.keys[keyEnv]
	if m == nil || isNull(m.Value) {
		return nil, nil
	}
	list, ok := entries(m.Value)
	if !ok {
		return nil, e.fail(m.Value, "env must be an object of variable names and values, not "+kind(m.Value), `e.g. "env": {"API_KEY": "${env:API_KEY}", "LOG_LEVEL": "debug"}`)
	}
	var out []envSetting
	for _, kv := range list {
		name := keyName(kv)
		if !validEnvName(name) {
			return nil, e.fail(kv.Key, "env "+strconv.Quote(name)+" is no variable name", "use letters, digits and _")
		}
		st := envSetting{name: name, at: kv.Key}
		switch v := unwrap(kv.Value).(type) {
		case *ast.NullNode:
			st.unset = true
		case *ast.IntegerNode, *ast.FloatNode:
			st.kv = name + "=" + v.GetToken().Value
		default:
			s, ok := str(v)
			if !ok {
				return nil, e.fail(kv.Value, "env "+name+" must be a string, a number or null, not "+kind(kv.Value), "quote it")
			}
			if s == "${env:"+name+"}" {
				st.kv = name
				break
			}
			val, err := e.expand(kv.Value, s)
			if err != nil {
				return nil, err
			}
			st.kv = name + "=" + val
		}
		out = append(out, st)
	}
	return out, nil
}
