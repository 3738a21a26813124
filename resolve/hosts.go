package resolve

import (
	"reflect"
	"strings"
)

// HostEntry is one entry of the policy's allow-hosts or deny-hosts, and
// who gave it.
type HostEntry struct {
	Spec string
	// From is Given (the caller's overrides: run's --allow-host), or the
	// File or Builtin that has it, Name the policy ("./x.yaml",
	// "built-in github").
	From Source
	Line int // the line of the file that has it; 0 for Given
}

// Hosts are Policy.AllowHosts or Policy.DenyHosts (field), each with who
// gave it, in order: a policy file's entries first, the caller's after.
func (r Resolution) Hosts(field string) []HostEntry {
	list, _ := reflect.ValueOf(r.Policy).FieldByName(field).Interface().([]string)
	entries := make([]HostEntry, len(list))
	for i, spec := range list {
		e := HostEntry{Spec: spec, From: Source{Kind: Given}}
		if at, ok := r.Origin.Item(field, i); ok {
			e.From, e.Line = Source{Kind: File, Name: at.File}, at.Line
			if strings.HasPrefix(at.File, "built-in ") {
				e.From.Kind = Builtin
			}
		}
		entries[i] = e
	}
	return entries
}
