package testenv

import (
	"reflect"
	"regexp"
	"slices"
	"unicode"
)

// unrenderedRef is a {Field} reference internal/field renders; ${VAR} is a
// policy variable, no reference.
var unrenderedRef = regexp.MustCompile(`(^|[^$])(\{[A-Z][A-Za-z0-9.]*\})`)

// Unrendered lists what in s a field renderer (internal/field) should have
// rendered for a user: {Field} references left as written, and any of
// names as a word (the Go names of settings, which users never type).
func Unrendered(s string, names []string) []string {
	var found []string
	for _, m := range unrenderedRef.FindAllStringSubmatch(s, -1) {
		found = append(found, m[2])
	}
	for _, n := range names {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(n) + `\b`).MatchString(s) {
			found = append(found, n)
		}
	}
	return found
}

// GoNames lists the field names of the struct types that only a Go program
// would write: those with a capital inside (NoFile, DenyTools), not the
// one-word ones (Memory, Net) that prose uses too. field.Doctor's
// reference, Doctor, is one of them.
func GoNames(types ...reflect.Type) []string {
	names := []string{"Doctor"}
	for _, t := range types {
		for i := range t.NumField() {
			n := t.Field(i).Name
			if slices.ContainsFunc([]rune(n[1:]), unicode.IsUpper) && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}
