package contract

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/mcpsandbox/mcpsandbox/internal/linediff"
)

// Render writes changes as a user reads them: a heading per item, its
// semantic lines, then a line diff of each changed text field (description,
// a parameter's description, instructions). A server's text is indented
// under a marker and its invisible characters are shown as \u escapes, so
// none of it can pass for mcpsandbox's own words or hide from the reader.
func Render(w io.Writer, changes []Change) {
	for _, c := range changes {
		fmt.Fprintf(w, "%s %s\n", visible(c.Name()), c.Op)
		for _, d := range c.Details {
			if d == c.Name()+" "+c.Op.String() {
				continue // "instructions changed" under its own heading
			}
			fmt.Fprintf(w, "  %s\n", visible(d)) // a type or member name is the server's, unquoted
		}
		var old, cur []textField
		if c.Old != nil {
			old = textFields(*c.Old)
		}
		if c.New != nil {
			cur = textFields(*c.New)
		}
		for _, f := range mergeFields(old, cur) {
			if f.old == f.cur {
				continue
			}
			fmt.Fprintf(w, "  %s:\n", f.label)
			writeLineDiff(w, "    ", f.old, f.cur)
		}
	}
}

// textField is one prose field of an item, the kind of text a poisoned
// description hides in.
type textField struct{ label, text string }

func textFields(it Item) []textField {
	if it.Kind == Instructions {
		var s string
		json.Unmarshal(it.Text, &s)
		return []textField{{"instructions", s}}
	}
	obj := object(it.Text)
	var fields []textField
	if s, ok := obj["description"].(string); ok {
		fields = append(fields, textField{"description", s})
	}
	props := asObject(asObject(obj["inputSchema"])["properties"])
	if args, ok := obj["arguments"].([]any); ok {
		props = map[string]any{}
		for _, a := range args {
			if name, ok := asObject(a)["name"].(string); ok {
				props[name] = a
			}
		}
	}
	noun := "parameter"
	if it.Kind == Prompt {
		noun = "argument"
	}
	for _, name := range union(props, nil) {
		if s, ok := asObject(props[name])["description"].(string); ok {
			fields = append(fields, textField{fmt.Sprintf("%s %s description", noun, quote(name)), s})
		}
	}
	return fields
}

type fieldPair struct{ label, old, cur string }

// mergeFields pairs fields by label, in the order they first appear.
func mergeFields(old, cur []textField) []fieldPair {
	var pairs []fieldPair
	at := map[string]int{}
	for _, f := range old {
		at[f.label] = len(pairs)
		pairs = append(pairs, fieldPair{label: f.label, old: f.text})
	}
	for _, f := range cur {
		if i, ok := at[f.label]; ok {
			pairs[i].cur = f.text
			continue
		}
		pairs = append(pairs, fieldPair{label: f.label, cur: f.text})
	}
	return pairs
}

// contextLines is how many unchanged lines a diff shows around a change.
const contextLines = 2

// writeLineDiff writes a line diff of a and b: "- " removed, "+ " added,
// "  " context; "…" stands for unchanged lines left out.
func writeLineDiff(w io.Writer, indent, a, b string) {
	ops := diffLines(splitLines(a), splitLines(b))
	show := make([]bool, len(ops))
	for i, op := range ops {
		if op.Kind == ' ' {
			continue
		}
		for j := max(0, i-contextLines); j <= min(len(ops)-1, i+contextLines); j++ {
			show[j] = true
		}
	}
	skipped := false
	for i, op := range ops {
		if !show[i] {
			skipped = true
			continue
		}
		if skipped {
			fmt.Fprintf(w, "%s  …\n", indent)
			skipped = false
		}
		fmt.Fprintf(w, "%s%c %s\n", indent, op.Kind, visible(op.Line))
	}
	if skipped {
		fmt.Fprintf(w, "%s  …\n", indent)
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// maxDiffCells bounds the LCS table; texts larger than that are shown as
// all removed, then all added.
const maxDiffCells = 1 << 22

// diffLines is a line diff in which a replaced block shows its removed
// lines, then its added ones.
func diffLines(a, b []string) []linediff.Op {
	if (len(a)+1)*(len(b)+1) > maxDiffCells {
		var ops []linediff.Op
		for _, l := range a {
			ops = append(ops, linediff.Op{Kind: '-', Line: l})
		}
		for _, l := range b {
			ops = append(ops, linediff.Op{Kind: '+', Line: l})
		}
		return ops
	}
	ops := linediff.Lines(a, b)
	for k := 0; k < len(ops); {
		e := k
		for e < len(ops) && ops[e].Kind != ' ' {
			e++
		}
		slices.SortStableFunc(ops[k:e], func(x, y linediff.Op) int { return int(y.Kind) - int(x.Kind) })
		k = e + 1
	}
	return ops
}

// visible writes controls and invisible characters (zero-width, bidi,
// tags) as \u escapes.
func visible(s string) string {
	if !strings.ContainsFunc(s, Invisible) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if Invisible(r) {
			if r > 0xFFFF {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Invisible reports whether a reader would not see r: a control, or a
// format character (zero-width, bidi, tags). The lock file escapes the same
// characters, so its diff shows what pins diff shows.
func Invisible(r rune) bool {
	return !unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r)
}
