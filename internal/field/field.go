// Package field is the one vocabulary for errors about settings: an error
// names the setting (a field of policy.Policy, which sandbox.Spec mirrors),
// what is wrong with its value and how to fix it, and the caller renders the
// field the way its user wrote it: `run` as --flag, a policy file as
// section.key at file:line:col.
//
// It is a package of its own because both policy and sandbox report such
// errors and neither may import the other (sandbox knows nothing of
// policies); it imports nothing of the project.
package field

import (
	"errors"
	"regexp"
	"strings"
	"sync"
)

// Error says which setting is wrong, why, and what to do.
//
// Problem and Fix may name settings as {Field}, e.g. "lower {NoFile} or
// raise the hard limit"; they are rendered like Field. When Problem names
// the error's own Field, or Field is empty (a fact of the host, not of a
// setting), the message does not begin with it. {Doctor} names the check of
// what this host can enforce, which the caller knows how to start.
type Error struct {
	Field   string // e.g. "NoFile"
	Value   string // the value as given; "" when it adds nothing
	Problem string // e.g. "exceeds the hard limit 1024 mcpsandbox runs with"
	Fix     string // e.g. "lower {NoFile} or raise the hard limit (ulimit -Hn)"
	Err     error  // the cause, if any
}

// Namer renders a field's name for the user, e.g. "NoFile" → "--nofile",
// and Doctor as the way to start the host check.
type Namer func(field string) string

// Doctor is the reference to the host check in Problem and Fix texts.
const Doctor = "Doctor"

// Plain names each field as itself: what Error() shows.
func Plain(field string) string { return field }

// Keep names each field as the reference {Field}: text rendered with it
// (a report kept for later, an error stored as a string) is rendered for
// the user with Refs once the caller's Namer is known.
func Keep(field string) string { return "{" + field + "}" }

// Renderer is an error that can name fields (and Doctor) the caller's way:
// *Error, and the error types of facts about the host that point to
// settings or to the host check.
type Renderer interface {
	error
	Render(name Namer) string
}

func (e *Error) Error() string { return e.Render(Plain) }

func (e *Error) Unwrap() error { return e.Err }

// Render writes the error with fields named by name.
func (e *Error) Render(name Namer) string {
	var parts []string
	self := "{" + e.Field + "}"
	if e.Field != "" && !strings.Contains(e.Problem, self) {
		head := name(e.Field)
		if e.Value != "" {
			head += " " + e.Value
		}
		parts = append(parts, head)
	}
	if e.Problem != "" {
		parts = append(parts, Refs(e.Problem, name))
	}
	if e.Err != nil {
		parts = append(parts, Message(e.Err, name))
	}
	if e.Fix != "" {
		parts = append(parts, Refs(e.Fix, name))
	}
	return strings.Join(parts, ": ")
}

// ref is compiled on first use: errors are rendered rarely, and every
// start would pay for it at init.
var ref = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([A-Z][A-Za-z0-9.]*)\}`) })

// Refs renders the {Field} references in s; a policy variable such as
// ${STATE} is no reference.
func Refs(s string, name Namer) string {
	var b strings.Builder
	last := 0
	for _, m := range ref().FindAllStringSubmatchIndex(s, -1) {
		if m[0] > 0 && s[m[0]-1] == '$' {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(name(s[m[2]:m[3]]))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// Rewrite renders, within s, the text of every Renderer in err's chain with
// fields named by name. s is err's text or a message built from it (a
// wrapper's prefix, a log line); other text stays as it is.
func Rewrite(s string, err error, name Namer) string {
	for _, e := range all(err) {
		s = strings.Replace(s, e.Error(), e.Render(name), 1)
	}
	return s
}

// Message is err's text with fields named by name.
func Message(err error, name Namer) string {
	if err == nil {
		return ""
	}
	return Rewrite(err.Error(), err, name)
}

// all lists the Renderers in err's tree, outermost first.
func all(err error) []Renderer {
	var found []Renderer
	var walk func(error)
	walk = func(err error) {
		for err != nil {
			if e, ok := err.(Renderer); ok {
				found = append(found, e)
				return // its own cause is rendered as part of it
			}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				for _, inner := range j.Unwrap() {
					walk(inner)
				}
				return
			}
			err = errors.Unwrap(err)
		}
	}
	walk(err)
	return found
}
