package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// sampleValue returns a value for a flag of the given field type that
// differs from every default.
func sampleValue(t *testing.T, typ reflect.Type) string {
	switch typ {
	case reflect.TypeFor[policy.ByteSize]():
		return "3MiB"
	case reflect.TypeFor[policy.Backoff]():
		return "1s..7s"
	case reflect.TypeFor[time.Duration]():
		return "7s"
	}
	switch typ.Kind() {
	case reflect.String:
		return "sample"
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return "77"
	case reflect.Float64:
		return "1.5"
	case reflect.Bool:
		return "true"
	case reflect.Slice:
		return "sample"
	}
	t.Fatalf("no sample value for %s", typ)
	return ""
}

// Each run flag sets exactly the Policy field it names and nothing else,
// and every Policy field but Command has exactly one flag.
func TestRunFlagsMapOneToOneOntoPolicy(t *testing.T) {
	ptype := reflect.TypeFor[policy.Policy]()
	covered := map[string]string{}
	for _, f := range runFlags {
		if prev, dup := covered[f.Field]; dup {
			t.Errorf("Policy.%s is set by both --%s and --%s", f.Field, prev, f.Name)
		}
		covered[f.Field] = f.Name
		field, ok := ptype.FieldByName(f.Field)
		if !ok {
			t.Errorf("--%s names Policy.%s, which does not exist", f.Name, f.Field)
			continue
		}
		p := policy.Default()
		fs := newFlagSet("run")
		bindRunFlags(fs, &p)
		arg := "--" + f.Name + "=" + sampleValue(t, field.Type)
		if err := fs.Parse([]string{arg, "--", "server"}); err != nil {
			t.Errorf("%s: %v", arg, err)
			continue
		}
		got, def := reflect.ValueOf(p), reflect.ValueOf(policy.Default())
		for i := range ptype.NumField() {
			name := ptype.Field(i).Name
			changed := !reflect.DeepEqual(got.Field(i).Interface(), def.Field(i).Interface())
			if changed != (name == f.Field) {
				t.Errorf("%s: Policy.%s changed=%v", arg, name, changed)
			}
		}
	}
	for i := range ptype.NumField() {
		name := ptype.Field(i).Name
		if _, ok := covered[name]; !ok && name != "Command" {
			t.Errorf("Policy.%s has no run flag", name)
		}
	}
}

func TestRepeatableFlagsAccumulate(t *testing.T) {
	p := policy.Default()
	fs := newFlagSet("run")
	bindRunFlags(fs, &p)
	err := fs.Parse([]string{"--ro", "/a", "--ro", "/b", "--rw", "/c", "--rw=/d", "--env", "HOME", "--env", "A=b=c", "--", "node", "--inspect", "x.js"})
	if err != nil {
		t.Fatal(err)
	}
	p.Command = fs.Args()
	want := struct{ ro, rw, env, cmd []string }{
		[]string{"/a", "/b"}, []string{"/c", "/d"}, []string{"HOME", "A=b=c"}, []string{"node", "--inspect", "x.js"},
	}
	if !reflect.DeepEqual(p.ReadOnly, want.ro) || !reflect.DeepEqual(p.ReadWrite, want.rw) ||
		!reflect.DeepEqual(p.Env, want.env) || !reflect.DeepEqual(p.Command, want.cmd) {
		t.Errorf("got ro=%q rw=%q env=%q cmd=%q, want %+v", p.ReadOnly, p.ReadWrite, p.Env, p.Command, want)
	}
}

// The manual documents every flag with its default and its Policy field.
func TestRunManualDocumentsEveryFlag(t *testing.T) {
	out, _, code := runCLI(t, "run", "--help")
	if code != exitOK {
		t.Fatalf("run --help exited %d", code)
	}
	def := policy.Default()
	for _, f := range runFlags {
		entry := manEntry(out, "--"+f.Name)
		if entry == "" {
			t.Errorf("run --help does not document --%s", f.Name)
			continue
		}
		if !strings.Contains(entry, "Sets Policy."+f.Field+".") {
			t.Errorf("--%s entry does not name Policy.%s:\n%s", f.Name, f.Field, entry)
		}
		if key := policy.KeyOf(f.Field); !strings.Contains(entry, "In a policy file: "+key+".") {
			t.Errorf("--%s entry does not name its policy-file key %s:\n%s", f.Name, key, entry)
		}
		if d := f.Value(&def).String(); d != "" && d != "false" && !strings.Contains(entry, "Default: "+d+".") {
			t.Errorf("--%s entry does not give its default %q:\n%s", f.Name, d, entry)
		}
	}
}

// manEntry returns the (unwrapped) text of the option entry starting with
// head in a manual.
func manEntry(page, head string) string {
	_, options, _ := strings.Cut(page, "\nOPTIONS\n")
	lines := strings.Split(options, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != head && !strings.HasPrefix(strings.TrimSpace(l), head+" ") {
			continue
		}
		var body []string
		for _, b := range lines[i+1:] {
			if !strings.HasPrefix(b, "        ") {
				break
			}
			body = append(body, strings.TrimSpace(b))
		}
		return strings.Join(body, " ")
	}
	return ""
}

// Policy and sandbox errors name fields; on the command line each is named
// as the flag that sets it, for every field a flag sets.
func TestFieldErrorsNameTheFlag(t *testing.T) {
	for _, f := range runFlags {
		if got := flagOf(f.Field); got != "--"+f.Name {
			t.Errorf("flagOf(%q) = %q, want --%s", f.Field, got, f.Name)
		}
	}
	for _, tc := range []struct{ args, want []string }{
		{[]string{"--max-message", "10", "--", "server"}, []string{"--max-message 10: is too small"}},
		{[]string{"--ping-interval", "1s", "--ping-timeout", "0s", "--", "server"}, []string{"--ping-timeout: must be positive while pings are on (--ping-interval 1s)"}},
		{[]string{"--nofile", "3", "--", "server"}, []string{"--nofile 3:", "use at least 16"}},
		{[]string{"--deny-tool", "write_[", "--", "server"}, []string{`--deny-tool "write_[": is no glob`}},
		{[]string{"--audit-mask", "pin[", "--", "server"}, []string{`--audit-mask "pin[": is no glob`}},
		{[]string{"--audit-log", "a.log", "--log-file", "a.log", "--", "server"}, []string{`--audit-log "a.log": is also --log-file`}},
		{[]string{"--unconfined"}, []string{"no server command: put it after --"}},
	} {
		_, stderr, code := runCLI(t, append([]string{"run"}, tc.args...)...)
		for _, w := range tc.want {
			if code != exitUsage || !strings.Contains(stderr, w) {
				t.Errorf("run %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, exitUsage, w)
			}
		}
	}
}
