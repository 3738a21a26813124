package contract

import (
	"fmt"
	"reflect"
)

// riskyHints are the boolean tool annotations and the value of each that
// claims the most risk, which is MCP's default when the hint is absent: an
// annotation may only ever move a tool toward this value without approval,
// never away from it, since annotations are the server's untrusted word.
var riskyHints = []struct {
	name  string
	risky bool
}{
	{"readOnlyHint", false},
	{"destructiveHint", true},
	{"idempotentHint", false},
	{"openWorldHint", true},
}

// annotationDetails compares two tools' annotations: a flip toward risk is
// counted, a flip toward safety ignored, and any other annotation's change
// counted.
func annotationDetails(a, b any) (counted, ignored []string) {
	old, cur := asObject(a), asObject(b)
	known := map[string]bool{}
	for _, h := range riskyHints {
		known[h.name] = true
		was, is := hint(old, h.name, h.risky), hint(cur, h.name, h.risky)
		if was == is {
			continue
		}
		line := fmt.Sprintf("annotation %s: %t → %t", h.name, was, is)
		if is == h.risky {
			counted = append(counted, line+" (raises risk)")
		} else {
			ignored = append(ignored, line+" (lowers risk: ignored)")
		}
	}
	for _, name := range union(old, cur) {
		if known[name] || reflect.DeepEqual(old[name], cur[name]) {
			continue
		}
		counted = append(counted, "annotation "+valueChange(name, old[name], cur[name]))
	}
	return counted, ignored
}

// hint is a boolean hint's value, MCP's default (the risky one) when absent
// or not a boolean.
func hint(annotations map[string]any, name string, risky bool) bool {
	if v, ok := annotations[name].(bool); ok {
		return v
	}
	return risky
}
