package policy

import (
	"errors"
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// Pos is a place in a policy file.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Origin records, for each Policy field a file set, where its key is: the
// last file of the extends chain that set it.
type Origin map[string]Pos

// FileError is a problem with a policy file at a position. Fields a file
// set are named as their keys; others (at their defaults, or set on the
// command line) the caller's way.
type FileError struct {
	Pos    Pos
	Err    *field.Error
	origin Origin
}

func (e *FileError) Error() string { return e.Render(KeyOf) }

func (e *FileError) Unwrap() error { return e.Err }

// Render writes "file:line:col: message", naming fields as above.
func (e *FileError) Render(name field.Namer) string {
	return e.Pos.String() + ": " + e.Err.Render(e.origin.namer(name, e.Err.Field))
}

// namer names the fields o holds (and also, if not "") as keys, others by name.
func (o Origin) namer(name field.Namer, also string) field.Namer {
	return func(f string) string {
		if _, ok := o[f]; ok || (f == also && also != "") {
			return KeyOf(f)
		}
		return name(f)
	}
}

// keyedError is a Validate error about a field no file set that may
// name fields a file set: those are named as keys, the rest the caller's way.
type keyedError struct {
	err    *field.Error
	origin Origin
}

func (e *keyedError) Error() string { return e.err.Error() }

func (e *keyedError) Unwrap() error { return e.err }

func (e *keyedError) Render(name field.Namer) string {
	return e.err.Render(e.origin.namer(name, ""))
}

// Validate is p.Validate with its error, when it is about a field a file
// set (per o), placed at that field's key; fields a file set are named as
// keys in any case.
func (o Origin) Validate(p *Policy) error {
	_, unknown := o[hostsUnknown]
	err := p.validate(unknown)
	if pos, used := o[stateUse]; used && err == nil && !p.State {
		err = &field.Error{Field: "State", Problem: "${STATE} is the server's state directory, which is off", Fix: "turn it on with {State}"}
		return &FileError{Pos: pos, Err: err.(*field.Error), origin: o}
	}
	var fe *field.Error
	if !errors.As(err, &fe) {
		return err
	}
	if pos, ok := o[hostsNone]; ok && fe.Field == "Net" && fe.Value == NetEgress {
		return &FileError{Pos: pos, Err: &field.Error{Field: "AllowHosts", Problem: "${ARG_HOSTS} found no URL among the server's arguments, so no host is allowed",
			Fix: "give the server the URL it connects to (e.g. postgresql://db.example.test/mydb), or name the host with {AllowHosts}"}, origin: o}
	}
	if pos, ok := o[fe.Field]; ok {
		return &FileError{Pos: pos, Err: fe, origin: o}
	}
	if len(o) > 0 {
		return &keyedError{fe, o}
	}
	return err
}
