package main

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The settings blocks of explain (Limits, MCP rules, Approval, Server
// requests, Audit log) share one layout: the key, its value, where the
// value came from, in columns that fit the longest key of any block, no
// line wider than a manual page's. A list too long for its line goes on
// beneath, at the value's column.
const (
	explainIndent = 2 // section's
	explainWidth  = cmdline.Width
	valueWidth    = 10 // the narrowest value column
)

// keyWidth is the longest key of the settings blocks.
func keyWidth() int {
	w := 0
	for _, k := range policy.Keys() {
		switch k.Section {
		case "limits", "mcp", "audit", "server-requests":
			w = max(w, len(k.Name))
		}
	}
	return w
}

// settings lists a policy-file section's keys with their values and where
// each came from, in the key table's order: a key added to the table is
// explained with no change here.
func (e explanation) settings(section string) []string {
	var lines []string
	for _, k := range policy.Keys() {
		if k.Section == section {
			lines = append(lines, e.setting(k.Name, e.value(k), e.source(k.Field))...)
		}
	}
	return lines
}

// setting lays out one key: its value's items joined by ", " as far as
// the width allows, then continued at the value's column, and the source
// after the last, or beneath it when it does not fit.
func (e explanation) setting(name string, items []string, from string) []string {
	from = "(" + from + ")"
	kw := keyWidth()
	room := explainWidth - explainIndent - kw - 1 // for the value and its source
	var values []string
	cur := ""
	for i, it := range items {
		if i < len(items)-1 {
			it += ","
		}
		if cur != "" && len(cur)+1+len(it) > room {
			values = append(values, cur)
			cur = it
			continue
		}
		if cur != "" {
			cur += " "
		}
		cur += it
	}
	last := fmt.Sprintf("%-*s %s", valueWidth, cur, from)
	if len(last) > room && cur != "" {
		values = append(values, cur)
		last = from
	}
	values = append(values, last)
	lines := make([]string, len(values))
	for i, v := range values {
		head := ""
		if i == 0 {
			head = name
		}
		lines[i] = fmt.Sprintf("%-*s %s", kw, head, v)
	}
	return lines
}

// value is a field's value as its flag spells it, a list item by item;
// zero says what it means.
func (e explanation) value(k policy.Key) []string {
	p := e.p
	f := reflect.ValueOf(&p).Elem().FieldByName(k.Field)
	if f.IsZero() || f.Kind() == reflect.Slice && f.Len() == 0 {
		switch {
		case strings.HasPrefix(k.Name, "allow-"):
			return []string{"all"}
		case k.Section == "limits":
			return []string{"unlimited"}
		}
		return []string{"none"}
	}
	if list, ok := f.Interface().([]string); ok {
		return list
	}
	if d, ok := f.Interface().(time.Duration); ok {
		return []string{shortDuration(d)}
	}
	for _, rf := range runFlags {
		if rf.Field == k.Field {
			return []string{rf.Value(&p).String()}
		}
	}
	return []string{fmt.Sprint(f.Interface())}
}
