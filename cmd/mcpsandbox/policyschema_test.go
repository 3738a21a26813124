package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite docs/policy.schema.json")

const schemaFile = "../../docs/policy.schema.json"

// docs/policy.schema.json is what the key table, the Policy field types and
// the flags' help say; `go test ./cmd/mcpsandbox -run Schema
// -update-schema` rewrites it. It is generated here, where the flags'
// texts are, so editors show the same help as `run --help`.
func TestPolicySchemaIsCurrent(t *testing.T) {
	got, err := json.MarshalIndent(policySchema(t), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *updateSchema {
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is not current (%v): run go test ./cmd/mcpsandbox -run Schema -update-schema", schemaFile, err)
	}
}

type object = map[string]any

const (
	durationRE = `([0-9]+(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+`
	sizeRE     = `^\s*[0-9]+(\.[0-9]+)?\s*([KkMmGg]([Ii][Bb]|[Bb])?|[Bb])?\s*$` // a unit in any case (policy.ParseByteSize)
)

func policySchema(t *testing.T) object {
	ptype := reflect.TypeFor[policy.Policy]()
	enums := map[string][]string{
		"Restart":   {policy.RestartAlways, policy.RestartOnFailure, policy.RestartNever},
		"Net":       {policy.NetNone, policy.NetHost, policy.NetEgress},
		"LogLevel":  {"debug", "info", "warn", "error"},
		"GrantArgs": {policy.GrantNone, policy.GrantRO, policy.GrantRW},
	}
	props := object{"extends": object{"type": "string",
		"description": "The policy this file starts from: a built-in NAME (default) or a FILE relative to this one (with a / in it, or ending in .yaml). Without it, the defaults."}}
	for _, k := range policy.Keys() {
		f, _ := ptype.FieldByName(k.Field)
		s := typeSchema(t, f.Type)
		if k.Path() == "env.set" {
			s = object{"type": []string{"object", "null"}, "propertyNames": object{"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
				"additionalProperties": object{"type": []string{"string", "number", "boolean"}}}
		}
		if k.Path() == "pins.overrides" {
			s = overridesSchema()
		}
		if e, ok := enums[k.Field]; ok {
			s["enum"] = e
		}
		for _, rf := range runFlags {
			if rf.Field == k.Field {
				s["description"] = rf.Usage + " Flag: --" + rf.Name + "."
			}
		}
		if k.Section == "" {
			props[k.Name] = s
			continue
		}
		sec, ok := props[k.Section].(object)
		if !ok {
			sec = object{"type": []string{"object", "null"}, "additionalProperties": false, "properties": object{}}
			props[k.Section] = sec
		}
		sec["properties"].(object)[k.Name] = s
	}
	return object{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"title":                "mcpsandbox policy file",
		"description":          "What one server run by `mcpsandbox run --policy FILE` may do and how it is supervised; see docs/policy.md.",
		"type":                 "object",
		"additionalProperties": false,
		"properties":           props,
	}
}

// overridesSchema is pins.overrides: tool → description and annotations
// raised toward risk (policy.ParseToolOverride).
func overridesSchema() object {
	hints := object{}
	for _, h := range []struct {
		name  string
		risky bool
	}{{"readOnlyHint", false}, {"destructiveHint", true}, {"idempotentHint", false}, {"openWorldHint", true}} {
		hints[h.name] = object{"const": h.risky}
	}
	return object{"type": []string{"object", "null"}, "propertyNames": object{"minLength": 1},
		"additionalProperties": object{"type": "object", "additionalProperties": false, "minProperties": 1, "properties": object{
			"description": object{"type": "string", "minLength": 1},
			"annotations": object{"type": "object", "additionalProperties": false, "properties": hints},
		}}}
}

func typeSchema(t *testing.T, typ reflect.Type) object {
	switch typ {
	case reflect.TypeFor[policy.ByteSize]():
		return object{"type": []string{"string", "integer"}, "pattern": sizeRE, "minimum": 0}
	case reflect.TypeFor[time.Duration]():
		return object{"anyOf": []object{{"type": "string", "pattern": "^(0|" + durationRE + ")$"}, {"const": 0}}}
	case reflect.TypeFor[policy.Backoff]():
		return object{"type": "string", "pattern": `^\s*` + durationRE + `\s*\.\.\s*` + durationRE + `\s*$`}
	}
	switch typ.Kind() {
	case reflect.String:
		return object{"type": "string"}
	case reflect.Bool:
		return object{"type": "boolean"}
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return object{"type": "integer"}
	case reflect.Float64:
		return object{"type": "number"}
	case reflect.Slice:
		return object{"type": "array", "items": object{"type": "string"}}
	}
	t.Fatalf("no schema for %s", typ)
	return nil
}
