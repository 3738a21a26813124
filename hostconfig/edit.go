package hostconfig

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/tailscale/hujson"
)

// The edits below each change the bytes of one entry, or of the member
// holding it, and splice them into data: the rest of the file is copied.

// SetLaunch gives the entry section/name the launch line command args,
// keeping its other members and their bytes. args nil removes its args.
// A new args list takes the shape of the old one (one line, or one
// element a line with the old indentation).
func SetLaunch(data []byte, section, name, command string, args []string) ([]byte, error) {
	root, err := parse(data)
	if err != nil {
		return nil, err
	}
	v, err := entryValue(root, section, name)
	if err != nil {
		return nil, err
	}
	start, end := v.StartOffset, v.EndOffset
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%s %q is not an object", section, name)
	}
	cmdAt := memberIndex(obj, "command")
	if cmdAt < 0 {
		return nil, fmt.Errorf("%s %q has no command", section, name)
	}
	obj.Members[cmdAt].Value.Value = hujson.String(command)
	switch argsAt := memberIndex(obj, "args"); {
	case args == nil && argsAt >= 0:
		removeMember(obj, argsAt)
	case args == nil:
	case argsAt >= 0:
		m := &obj.Members[argsAt].Value
		old, _ := m.Value.(*hujson.Array)
		m.Value = newArray(args, old)
	default:
		c := obj.Members[cmdAt]
		arg := hujson.ObjectMember{
			Name:  hujson.Value{BeforeExtra: breakIndent(c.Name.BeforeExtra, " "), Value: hujson.String("args"), AfterExtra: c.Name.AfterExtra},
			Value: hujson.Value{BeforeExtra: c.Value.BeforeExtra, Value: newArray(args, nil)},
		}
		if cmdAt == len(obj.Members)-1 { // the trailing comma, if any, moves on
			arg.Value.AfterExtra, obj.Members[cmdAt].Value.AfterExtra = c.Value.AfterExtra, nil
		}
		obj.Members = append(obj.Members[:cmdAt+1], append([]hujson.ObjectMember{arg}, obj.Members[cmdAt+1:]...)...)
	}
	return splice(data, start, end, trimmed(*v)), nil
}

// ReplaceEntry puts raw, a value's bytes, in place of the entry's value.
func ReplaceEntry(data []byte, section, name string, raw []byte) ([]byte, error) {
	if _, err := hujson.Parse(raw); err != nil {
		return nil, fmt.Errorf("the entry to put back: %v", err)
	}
	root, err := parse(data)
	if err != nil {
		return nil, err
	}
	v, err := entryValue(root, section, name)
	if err != nil {
		return nil, err
	}
	return splice(data, v.StartOffset, v.EndOffset, raw), nil
}

// AddEntry adds the server name with raw, a value's bytes whose lines
// after the first are indented for a member at rawIndent, to the first of
// Sections data has (mcpServers when it has neither), indented as the
// members beside it are.
func AddEntry(data []byte, name string, raw []byte, rawIndent string) ([]byte, error) {
	root, err := parse(data)
	if err != nil {
		return nil, err
	}
	rootObj, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("the file is not an object")
	}
	var sec *hujson.Value
	for _, s := range Sections {
		if sec = member(&root, s); sec != nil {
			break
		}
	}
	if sec == nil { // a new mcpServers at the end, then the entry in it
		unit := indentUnit(data)
		nl, indent := lineBreak(data), unit
		if n := len(rootObj.Members); n > 0 {
			nl, indent = splitBreak(rootObj.Members[n-1].Name.BeforeExtra, nl, indent)
		}
		empty := fmt.Sprintf("{%s%s}", nl, indent)
		data = insertMember(data, &root, "mcpServers", []byte(empty), nl, indent)
		return AddEntry(data, name, raw, rawIndent)
	}
	obj, ok := sec.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("its servers are not an object")
	}
	if memberIndex(obj, name) >= 0 {
		return nil, fmt.Errorf("it has a server %q already", name)
	}
	nl := lineBreak(data)
	closeIndent := lineIndent(data, sec.EndOffset-1)
	indent := closeIndent + indentUnit(data)
	if n := len(obj.Members); n > 0 {
		nl, indent = splitBreak(obj.Members[n-1].Name.BeforeExtra, nl, indent)
	}
	raw = reindent(raw, rawIndent, indent, indentUnit(data), nl)
	return insertMember(data, sec, name, raw, nl, indent), nil
}

// RemoveEntry takes the server section/name out of data, with the bytes
// before its name (its line) and its comma.
func RemoveEntry(data []byte, section, name string) ([]byte, error) {
	root, err := parse(data)
	if err != nil {
		return nil, err
	}
	sec := sectionValue(&root, section)
	if sec == nil {
		return nil, fmt.Errorf("there is no %s", section)
	}
	obj, ok := sec.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("its %s is not an object", section)
	}
	i := memberIndex(obj, name)
	if i < 0 {
		return nil, fmt.Errorf("there is no server %q in %s", name, section)
	}
	removeMember(obj, i)
	return splice(data, sec.StartOffset, sec.EndOffset, trimmed(*sec)), nil
}

// insertMember adds "name": raw as the last member of the object v.
func insertMember(data []byte, v *hujson.Value, name string, raw []byte, nl, indent string) []byte {
	obj := v.Value.(*hujson.Object)
	val, _ := hujson.Parse(raw)
	val.BeforeExtra, val.AfterExtra = hujson.Extra(" "), nil
	m := hujson.ObjectMember{Name: hujson.Value{BeforeExtra: hujson.Extra(nl + indent), Value: hujson.String(name)}, Value: val}
	if n := len(obj.Members); n > 0 && obj.Members[n-1].Value.AfterExtra != nil {
		m.Value.AfterExtra = hujson.Extra{} // keep the trailing comma
	}
	if len(obj.Members) == 0 && !bytes.ContainsAny(obj.AfterExtra, "\n") {
		obj.AfterExtra = append(hujson.Extra(nl), lineIndent(data, v.EndOffset-1)...)
	}
	obj.Members = append(obj.Members, m)
	return splice(data, v.StartOffset, v.EndOffset, trimmed(*v))
}

func removeMember(obj *hujson.Object, i int) {
	last := i == len(obj.Members)-1
	removed := obj.Members[i]
	obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
	if last && i > 0 {
		obj.Members[i-1].Value.AfterExtra = removed.Value.AfterExtra
	}
}

// newArray is args as a JSON array shaped as old (nil: on one line).
func newArray(args []string, old *hujson.Array) *hujson.Array {
	arr := &hujson.Array{}
	first, rest := hujson.Extra(nil), hujson.Extra(" ")
	var trailing hujson.Extra
	if old != nil {
		arr.AfterExtra = breakIndent(old.AfterExtra, "")
		if n := len(old.Elements); n > 0 {
			first = breakIndent(old.Elements[0].BeforeExtra, "")
			rest = breakIndent(old.Elements[0].BeforeExtra, " ")
			if n > 1 {
				rest = breakIndent(old.Elements[1].BeforeExtra, " ")
			}
			trailing = old.Elements[n-1].AfterExtra
			if trailing != nil {
				trailing = hujson.Extra{}
			}
		}
		if len(old.Elements) == 0 {
			arr.AfterExtra = nil
		}
	}
	for i, a := range args {
		before := rest
		if i == 0 {
			before = first
		}
		arr.Elements = append(arr.Elements, hujson.Value{BeforeExtra: before, Value: hujson.String(a)})
	}
	if n := len(arr.Elements); n > 0 {
		arr.Elements[n-1].AfterExtra = trailing
	}
	keepCommonTail(arr, old)
	return arr
}

// keepCommonTail puts back, with their comments, the elements of old that
// end arr as they ended old: wrap's args end with the entry's own, and
// undo's are those again.
func keepCommonTail(arr, old *hujson.Array) {
	if old == nil {
		return
	}
	n, m, k := len(arr.Elements), len(old.Elements), 0
	for k < n && k < m && sameString(arr.Elements[n-1-k], old.Elements[m-1-k]) {
		k++
	}
	if k == 0 {
		return
	}
	kept := slices.Clone(old.Elements[m-k:])
	if !bytes.ContainsRune(kept[0].BeforeExtra, '/') { // no comment: the blanks of its new place
		kept[0].BeforeExtra = arr.Elements[n-k].BeforeExtra
	}
	arr.Elements = append(arr.Elements[:n-k], kept...)
	arr.AfterExtra = old.AfterExtra // what follows the last element, a comment after its comma too
}

func sameString(a, b hujson.Value) bool {
	la, okA := a.Value.(hujson.Literal)
	lb, okB := b.Value.(hujson.Literal)
	return okA && okB && la.Kind() == '"' && lb.Kind() == '"' && la.String() == lb.String()
}

// KeepMembers is raw, an object's bytes, with only the members names
// lists.
func KeepMembers(raw []byte, names []string) ([]byte, error) {
	v, err := hujson.Parse(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("not an object")
	}
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if l, ok := obj.Members[i].Name.Value.(hujson.Literal); !ok || !slices.Contains(names, l.String()) {
			removeMember(obj, i)
		}
	}
	return trimmed(v), nil
}
