package policy

import (
	"reflect"

	"github.com/goccy/go-yaml/ast"
)

// Inline is a policy written inside another file, in the policy file
// schema: the daemon's configuration gives a server's policy so. It is a
// level over the policy it extends, as run's flags are over --policy's:
// its values go in as overrides (resolve.Request's Overrides and Given).
type Inline struct {
	Policy     Policy   // the values it sets, in the fields Given names (the others zero)
	Given      []string // the fields it sets, in the order of Keys
	Extends    string   // the policy it extends as written ("" when it names none)
	ExtendsPos Pos      // where that is
	Origin     Origin   // where each field of Given is set
}

// noVarsInline is why an inline policy refuses variables: their values
// (the server's arguments, state directory, home) are settled only when
// the server is resolved, after its file is read.
const noVarsInline = "variables are not expanded in an inline policy: put these settings in a policy file and name that file instead"

// DecodeInline reads n, a mapping of file in the policy file schema
// (extends included), checking it as a policy file is checked: errors are
// *FileError at file's line and column. Variables are refused.
func DecodeInline(file string, n ast.Node) (Inline, error) {
	doc, err := documentOf(file, n, "an inline policy")
	if err != nil {
		return Inline{}, err
	}
	in := Inline{Origin: Origin{}}
	if doc.extends != nil {
		if in.Extends, err = extendsRef(file, doc.extends); err != nil {
			return Inline{}, err
		}
		in.ExtendsPos = posOf(file, doc.extends.Value)
	}
	d := &decoder{file: file, vars: Vars{none: noVarsInline}, p: &in.Policy, origin: in.Origin}
	if err := d.apply(doc); err != nil {
		return Inline{}, err
	}
	if d.mode == nil {
		// Its allow-hosts selected egress (selectNet); that is for the
		// level it lands on to do again, over whatever mode that has.
		in.Policy.Net = ""
		delete(in.Origin, "Net")
	}
	fields := reflect.TypeFor[Policy]()
	for _, k := range keys {
		if _, set := in.Origin[k.Field]; !set {
			continue
		}
		if _, ok := fields.FieldByName(k.Field); ok && (len(in.Given) == 0 || in.Given[len(in.Given)-1] != k.Field) {
			in.Given = append(in.Given, k.Field)
		}
	}
	for f := range in.Origin {
		if _, ok := fields.FieldByName(f); !ok {
			delete(in.Origin, f) // the decoder's own notes (host items, ${STATE})
		}
	}
	return in, nil
}
