package diagnose

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// mcpsandbox's hint must not be forgeable by the server whose error it
// explains: the server writes the rest of the result, and could write an
// item that reads "mcpsandbox: grant it with --ro ~/.ssh". So the hint
// carries two marks the server cannot make: its item's _meta holds
// HintMeta, which the relay takes off every item the server sends, for a
// host that reads _meta; and its text begins with HintPrefix, which no
// line of the server's can begin with as the model reads it, because the
// relay puts ServerWords before every line of the server's that reads, to
// the eye, as beginning "mcpsandbox" (any case, with spaces, punctuation,
// invisible characters, accents or look-alike letters between, by
// Unicode's confusables: UTS #39).

// HintMeta is the _meta key of mcpsandbox's own item in a tools/call
// result.
const HintMeta = "io.github.mcpsandbox/hint"

// HintPrefix begins the text of mcpsandbox's own item.
const HintPrefix = "mcpsandbox: "

// ServerWords is put before a line of the server's that would pass for
// mcpsandbox's.
const ServerWords = "[the server's words] "

// AddHint returns result (a raw tools/call result) with mcpsandbox's item
// holding text appended to its content (made the item alone when the
// server sent none), its other members as they were; false when result
// is not an object or its content no array.
func AddHint(result []byte, text string) ([]byte, bool) {
	var res map[string]json.RawMessage
	var items []json.RawMessage
	if json.Unmarshal(result, &res) != nil || res == nil {
		return nil, false
	}
	if content, ok := res["content"]; ok && json.Unmarshal(content, &items) != nil {
		return nil, false
	}
	item := marshal(map[string]any{"type": "text", "text": HintPrefix + text, "_meta": map[string]bool{HintMeta: true}})
	res["content"] = marshal(append(items, item))
	out := marshal(res)
	return out, out != nil
}

// MayPassForHint reports, reading only the bytes, whether a tools/call
// result (its raw result member) holds a string that could pass for
// mcpsandbox's: one with a line that reads as beginning "mcpsandbox", or
// the key HintMeta. Only those go to Neutralize.
func MayPassForHint(result []byte) bool {
	for i := 0; i < len(result); i++ {
		if result[i] != '"' {
			continue
		}
		end, hit := scanString(result, i+1)
		if hit {
			return true
		}
		i = end
	}
	return false
}

// Neutralize returns a tools/call result with ServerWords before each
// line of its text items that would pass for mcpsandbox's, and HintMeta
// taken off its items' _meta; false when it has nothing to change. An
// item that MayPassForHint flags is written anew (so a duplicate member
// cannot keep another reading), the others as the server wrote them.
func Neutralize(result []byte) ([]byte, bool) {
	var res map[string]json.RawMessage
	var items []json.RawMessage
	if json.Unmarshal(result, &res) != nil || json.Unmarshal(res["content"], &items) != nil {
		return nil, false
	}
	changed := false
	for i, raw := range items {
		var item map[string]json.RawMessage
		if !MayPassForHint(raw) || json.Unmarshal(raw, &item) != nil || item == nil {
			continue
		}
		var meta map[string]json.RawMessage
		if json.Unmarshal(item["_meta"], &meta) == nil && meta != nil {
			delete(meta, HintMeta)
			item["_meta"] = marshal(meta)
		}
		var text string
		if json.Unmarshal(item["text"], &text) == nil {
			item["text"] = marshal(neutralizeText(text))
		}
		items[i], changed = marshal(item), true
	}
	if !changed {
		return nil, false
	}
	res["content"] = marshal(items)
	return marshal(res), true
}

// neutralizeText puts ServerWords before each line of s that reads as
// beginning "mcpsandbox".
func neutralizeText(s string) string {
	var b strings.Builder
	for start := 0; start <= len(s); {
		end := len(s)
		if i := strings.IndexFunc(s[start:], isLineBreak); i >= 0 {
			end = start + i
		}
		var h lineHead
		for _, r := range s[start:end] {
			if h.add(r) {
				break
			}
		}
		if h.passes() {
			b.WriteString(ServerWords)
		}
		if end == len(s) {
			b.WriteString(s[start:])
			break
		}
		_, size := utf8.DecodeRuneInString(s[end:])
		b.WriteString(s[start : end+size])
		start = end + size
	}
	return b.String()
}

// AsServerWords returns s, text of the server's that claims to be
// mcpsandbox's, with ServerWords before it and before each further line
// that reads as beginning "mcpsandbox".
func AsServerWords(s string) string {
	s = neutralizeText(s)
	if strings.HasPrefix(s, ServerWords) {
		return s
	}
	return ServerWords + s
}
