package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml/parser"
)

// inlineIn decodes the value of key "policy" of a JSON document, as the
// daemon's configuration holds one.
func inlineIn(t *testing.T, doc string) (Inline, error) {
	t.Helper()
	f, err := parser.ParseBytes([]byte(doc), 0)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := entries(f.Docs[0].Body)
	for _, kv := range list {
		if name, _ := keyName(kv); name == "policy" {
			return DecodeInline("cfg.json", kv.Value)
		}
	}
	t.Fatal("no policy key")
	return Inline{}, nil
}

// An inline policy sets what it names and no more: the fields it gives are
// listed, the rest stay zero for the policy below to decide.
func TestInlineGivesOnlyWhatItSets(t *testing.T) {
	in, err := inlineIn(t, `{"policy": {
  "extends": "./base.yaml",
  "limits": {"memory": "256MiB", "pids": 32},
  "filesystem": {"ro": ["/srv/data"]},
  "env": {"pass": ["TOKEN"], "set": {"MODE": "$$fast"}},
  "health": {"ping-interval": "0s"},
  "network": {"allow-hosts": ["api.example.test"]}
}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := Policy{Memory: 256 * MiB, Pids: 32, ReadOnly: []string{"/srv/data"}, Env: []string{"TOKEN", "MODE=$fast"}, AllowHosts: []string{"api.example.test"}}
	if !reflect.DeepEqual(in.Policy, want) {
		t.Errorf("policy %+v,\nwant %+v", in.Policy, want)
	}
	// ping-interval 0s is given (it turns pings off) although it is zero;
	// Net is not: allow-hosts select egress where the inline policy lands.
	if g := strings.Join(in.Given, " "); g != "ReadOnly AllowHosts Env Memory Pids PingInterval" {
		t.Errorf("given %s", g)
	}
	if in.Extends != "./base.yaml" || in.ExtendsPos != (Pos{"cfg.json", 2, 14}) {
		t.Errorf("extends %q at %v", in.Extends, in.ExtendsPos)
	}
	if p, ok := in.Origin["Memory"]; !ok || p != (Pos{"cfg.json", 3, 14}) {
		t.Errorf("memory at %v", p)
	}
	if _, ok := in.Origin["AllowHosts[0]"]; ok {
		t.Error("origin keeps the decoder's item notes")
	}
	if in.Policy.PingInterval != 0*time.Second {
		t.Error("ping interval")
	}
}

func TestInlineNamesItsMode(t *testing.T) {
	in, err := inlineIn(t, `{"policy": {"network": {"mode": "host"}}}`)
	if err != nil || in.Policy.Net != NetHost || !reflect.DeepEqual(in.Given, []string{"Net"}) {
		t.Errorf("net %q given %q err %v", in.Policy.Net, in.Given, err)
	}
}

// Errors are placed in the file holding the inline policy, as a policy
// file's are.
func TestInlineErrorsAreAtFileLineCol(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		at        Pos
		want      []string
	}{
		{"unknown section", `{"policy": {"limit": {}}}`, Pos{"cfg.json", 1, 13}, []string{`unknown key "limit"`, "did you mean limits?"}},
		{"unknown key", "{\"policy\": {\n  \"limits\": {\"memroy\": \"1GiB\"}}}", Pos{"cfg.json", 2, 14}, []string{`"memroy" in limits`, "did you mean memory?"}},
		{"bad value", `{"policy": {"limits": {"pids": "many"}}}`, Pos{"cfg.json", 1, 32}, []string{"limits.pids", "must be a whole number"}},
		{"not a mapping", `{"policy": ["x"]}`, Pos{"cfg.json", 1, 12}, []string{"an inline policy is a mapping of sections"}},
		{"variable", `{"policy": {"filesystem": {"rw": ["${HOME}/x"]}}}`, Pos{"cfg.json", 1, 35}, []string{"${HOME}", "variables are not expanded in an inline policy", "policy file"}},
		{"variable in a host", `{"policy": {"network": {"allow-hosts": ["${ARG_HOSTS}"]}}}`, Pos{"cfg.json", 1, 41}, []string{"${ARG_HOSTS}", "not expanded in an inline policy"}},
		{"variable as every argument", `{"policy": {"filesystem": {"ro": ["${ARGS}"]}}}`, Pos{"cfg.json", 1, 35}, []string{"${ARGS}", "not expanded"}},
		{"empty extends", `{"policy": {"extends": ""}}`, Pos{"cfg.json", 1, 24}, []string{"extends must name a built-in policy or a file"}},
		{"match", `{"policy": {"match": []}}`, Pos{"cfg.json", 1, 13}, []string{"match is only for built-in policies"}},
		{"mode against hosts", `{"policy": {"network": {"mode": "none", "allow-hosts": ["a.example.test"]}}}`, Pos{"cfg.json", 1, 33}, []string{"contradicts network.allow-hosts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := inlineIn(t, tc.doc)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v, want a FileError", err)
			}
			if fe.Pos != tc.at {
				t.Errorf("at %v, want %v (%v)", fe.Pos, tc.at, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}
