package config

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The keys of a server's entry: the hosts' (Claude Desktop and Cursor
// write command, args, env; Cursor and VS Code type, envFile; VS Code cwd,
// sandboxEnabled, sandbox, dev; some hosts disabled), an http server's
// (which is skipped), and mcpsandbox's own.
const (
	keyType     = "type"
	keyCommand  = "command"
	keyArgs     = "args"
	keyEnv      = "env"
	keyEnvFile  = "envFile"
	keyCwd      = "cwd"
	keyEnabled  = "sandboxEnabled"
	keyDisabled = "disabled"
	keyDev      = "dev"

	keyPolicy       = "policy"
	keyPrestart     = "prestart"
	keyMaxInstances = "max-instances"
	keyUsers        = "users"
)

var (
	stdioKeys = []string{keyType, keyCommand, keyArgs, keyEnv, keyEnvFile, keyCwd, keyEnabled, keySandbox, keyDisabled, keyDev}
	httpKeys  = []string{"url", "headers", "oauth"}
	ownKeys   = []string{keyPolicy, keyPrestart, keyMaxInstances, keyUsers}
	entryKeys = slices.Concat(stdioKeys, httpKeys, ownKeys)
)

const entryExample = `e.g. "NAME": {"command": "npx", "args": ["-y", "PACKAGE"]}`

// entry is one server's entry being read.
type entry struct {
	*reader
	keys map[string]*ast.MappingValueNode
	s    Server
	o    overrides
}

// server reads the entry kv; skip is true for a server the daemon does
// not run (an http or sse one), noted in the warnings.
func (r *reader) server(kv *ast.MappingValueNode, rootSandbox ast.Node) (s Server, skip bool, err error) {
	name := keyName(kv)
	if err := r.checkName(kv.Key, name); err != nil {
		return Server{}, false, err
	}
	list, ok := entries(kv.Value)
	if !ok {
		return Server{}, false, r.fail(kv.Value, "server "+strconv.Quote(name)+" must be an object, not "+kind(kv.Value), entryExample)
	}
	e := &entry{reader: r, keys: map[string]*ast.MappingValueNode{}, o: overrides{given: map[string]bool{}, origin: policy.Origin{}}}
	for _, m := range list {
		k := keyName(m)
		if !slices.Contains(entryKeys, k) {
			return Server{}, false, r.fail(m.Key, "unknown key "+strconv.Quote(k)+" in server "+strconv.Quote(name), suggest(k, entryKeys, "a server"))
		}
		e.keys[k] = m
	}
	transport, err := e.transport()
	if err != nil || transport != "stdio" {
		if err == nil {
			r.warn(kv.Key, "server "+strconv.Quote(name)+" is an "+transport+" server, which the daemon does not run (mcpsandbox runs stdio servers): skipped")
		}
		return Server{}, err == nil, err
	}
	e.s = Server{Name: name, Pos: posOf(r.file, kv.Key), MaxInstances: DefaultMaxInstances}
	for _, step := range []func() error{e.command, e.cwd, e.flags, e.own, e.env, func() error { return e.sandbox(rootSandbox) }} {
		if err := step(); err != nil {
			return Server{}, false, err
		}
	}
	e.s.Overrides, e.s.Given, e.s.Origin = e.o.p, e.o.fields(), e.o.origin
	return e.s, false, nil
}

// checkName refuses a name that a command line or a log would garble.
func (r *reader) checkName(n ast.Node, name string) error {
	ok := name != ""
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._-@/:+", c)) {
			ok = false
		}
	}
	if !ok {
		return r.fail(n, "server name "+strconv.Quote(name)+" is not one `mcpsandbox connect NAME` can take",
			"use letters, digits and . _ - @ / : +, e.g. github or fs-home")
	}
	return nil
}

// transport is the entry's type: stdio, or http or sse (a url without a
// type is one, as Cursor writes remote servers).
func (e *entry) transport() (string, error) {
	if t := e.keys[keyType]; t != nil {
		s, ok := str(t.Value)
		switch {
		case !ok || s != "stdio" && s != "http" && s != "sse":
			return "", e.fail(t.Value, "type must be \"stdio\", \"http\" or \"sse\"", "the daemon runs stdio servers: \"type\": \"stdio\", or leave type out")
		case s != "stdio":
			return s, nil
		}
	} else if e.keys["url"] != nil {
		return "http", nil
	}
	for _, k := range httpKeys {
		if m := e.keys[k]; m != nil {
			return "", e.fail(m.Key, k+" is for an http server; a stdio server is started from command and args", "delete "+k+", or make the server \"type\": \"http\"")
		}
	}
	return "stdio", nil
}

func (e *entry) command() error {
	m := e.keys[keyCommand]
	if m == nil {
		return e.fail(e.keysNode(), "server "+strconv.Quote(e.s.Name)+" has no command", `give the program that starts it: "command": "npx", "args": ["-y", "PACKAGE"]`)
	}
	s, ok := str(m.Value)
	if !ok {
		fix := "give the program as a string and its arguments in args"
		return e.fail(m.Value, "command must be a string, not "+kind(m.Value), fix)
	}
	cmd, err := e.expand(m.Value, s)
	if err != nil {
		return err
	}
	if strings.TrimSpace(cmd) == "" {
		return e.fail(m.Value, "command is empty", "give the program that starts the server, e.g. npx")
	}
	e.s.Command = []string{cmd}
	a := e.keys[keyArgs]
	if a == nil || isNull(a.Value) {
		return nil
	}
	seq, ok := unwrap(a.Value).(*ast.SequenceNode)
	if !ok {
		return e.fail(a.Value, "args must be a list of strings, not "+kind(a.Value), `e.g. "args": ["-y", "PACKAGE"]`)
	}
	for _, item := range seq.Values {
		s, ok := str(item)
		if !ok {
			return e.fail(item, "args items must be strings, not "+kind(item), "quote it")
		}
		arg, err := e.expand(item, s)
		if err != nil {
			return err
		}
		e.s.Command = append(e.s.Command, arg)
	}
	return nil
}

// keysNode is where to report what the entry lacks: its first key.
func (e *entry) keysNode() ast.Node {
	var first *ast.MappingValueNode
	for _, m := range e.keys {
		if first == nil || before(posOf(e.file, m.Key), posOf(e.file, first.Key)) {
			first = m
		}
	}
	if first == nil {
		return nil
	}
	return first.Key
}

func (e *entry) cwd() error {
	e.s.Cwd = e.workspace // VS Code's default: the workspace folder
	m := e.keys[keyCwd]
	if m == nil {
		return nil
	}
	s, ok := str(m.Value)
	if !ok {
		return e.fail(m.Value, "cwd must be a string, not "+kind(m.Value), "give the server's working directory")
	}
	var err error
	e.s.Cwd, err = e.path(m.Value, s, e.dir)
	return err
}

// workDir is the server's working directory, where its relative paths
// are.
func (e *entry) workDir() string {
	if e.s.Cwd != "" {
		return e.s.Cwd
	}
	return e.dir
}

// flags reads disabled and notes what the daemon leaves aside.
func (e *entry) flags() error {
	if m := e.keys[keyDisabled]; m != nil {
		b, ok := unwrap(m.Value).(*ast.BoolNode)
		if !ok {
			return e.fail(m.Value, "disabled must be true or false, not "+kind(m.Value), "")
		}
		e.s.Disabled = b.Value
	}
	if m := e.keys[keyDev]; m != nil {
		e.warn(m.Key, "dev (VS Code's development mode: restart on change, debugger) is not the daemon's: ignored")
	}
	return nil
}

// own reads mcpsandbox's keys.
func (e *entry) own() error {
	var prestart ast.Node
	for _, k := range []string{keyPrestart, keyMaxInstances} {
		m := e.keys[k]
		if m == nil {
			continue
		}
		i, ok := unwrap(m.Value).(*ast.IntegerNode)
		n, err := 0, errors.New("")
		if ok {
			n, err = strconv.Atoi(i.Token.Value)
		}
		least := 0
		if k == keyMaxInstances {
			least = 1
		}
		if err != nil || n < least {
			return e.fail(m.Value, k+" must be a whole number from "+strconv.Itoa(least)+", not "+m.Value.String(), map[string]string{
				keyPrestart:     "the number of instances kept started and waiting for a client, e.g. 1",
				keyMaxInstances: "the most instances of the server at once, e.g. 16",
			}[k])
		}
		if k == keyPrestart {
			e.s.Prestart, prestart = n, m.Value
		} else {
			e.s.MaxInstances = n
		}
	}
	if e.s.Prestart > e.s.MaxInstances {
		return e.fail(prestart, "prestart "+strconv.Itoa(e.s.Prestart)+" exceeds max-instances "+strconv.Itoa(e.s.MaxInstances)+" (warm instances count towards it)",
			"lower prestart, or raise max-instances")
	}
	if m := e.keys[keyUsers]; m != nil {
		var err error
		if e.s.Users, err = e.users(m); err != nil {
			return err
		}
	}
	if m := e.keys[keyPolicy]; m != nil {
		return e.policy(m)
	}
	return nil
}

// policy reads the entry's policy: a reference, or an inline policy.
func (e *entry) policy(m *ast.MappingValueNode) error {
	if s, ok := str(m.Value); ok {
		ref, err := e.policyRef(m.Value, s)
		e.s.Policy = ref
		e.o.origin[policyKeyField] = posOf(e.file, m.Value)
		return err
	}
	if _, ok := entries(m.Value); !ok {
		return e.fail(m.Value, "policy must be a policy file, a built-in policy's name or an object of policy settings, not "+kind(m.Value),
			`e.g. "policy": "./github.yaml", "policy": "npx", or "policy": {"extends": "npx", "limits": {"memory": "256MiB"}}`)
	}
	in, err := policy.DecodeInline(e.file, m.Value)
	if err != nil {
		return err
	}
	if in.Extends != "" {
		e.o.origin[policyKeyField] = in.ExtendsPos
		if e.s.Policy, err = e.policyRef(m.Value, in.Extends); err != nil {
			return err
		}
	}
	e.o.p = in.Policy
	for _, f := range in.Given {
		e.o.given[f] = true
		e.o.origin[f] = in.Origin[f]
	}
	return nil
}

// policyKeyField is where Origin keeps the policy reference's place: the
// field resolve names it by (resolve.PolicyField).
const policyKeyField = "Policy"

// policyRef is a policy reference: a file, made absolute against the
// configuration's directory, or a built-in's name.
func (e *entry) policyRef(n ast.Node, ref string) (string, error) {
	if ref == "" {
		return "", e.fail(n, "policy is empty", "name a policy file (./github.yaml) or a built-in (npx), or delete the key to choose from the command")
	}
	if !policy.IsFile(ref) {
		return ref, nil
	}
	return e.path(n, ref, e.dir)
}

// overrides collects the policy settings of an entry.
type overrides struct {
	p      policy.Policy
	given  map[string]bool
	origin policy.Origin
}

// set notes that the entry gives field, first at pos.
func (o *overrides) set(f string, pos policy.Pos) {
	o.given[f] = true
	if _, ok := o.origin[f]; !ok {
		o.origin[f] = pos
	}
}

// fields are the fields given, in the order of the policy's keys.
func (o *overrides) fields() []string {
	var out []string
	for _, k := range policy.Keys() {
		if o.given[k.Field] && !slices.Contains(out, k.Field) {
			out = append(out, k.Field)
		}
	}
	return out
}
