package diagnose

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonRune decodes the rune of a JSON string's contents at raw[i], an
// escape included, and returns it with the index after it.
func jsonRune(raw []byte, i int) (rune, int) {
	c := raw[i]
	switch {
	case c < utf8.RuneSelf && c != '\\':
		return rune(c), i + 1
	case c != '\\':
		r, size := utf8.DecodeRune(raw[i:])
		return r, i + size
	case i+1 >= len(raw):
		return utf8.RuneError, len(raw)
	}
	switch e := raw[i+1]; e {
	case 'u':
		r, ok := hex4(raw, i+2)
		if !ok {
			return utf8.RuneError, i + 2
		}
		if utf16.IsSurrogate(r) {
			if lo, ok := hex4(raw, i+8); ok && i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				if pair := utf16.DecodeRune(r, lo); pair != utf8.RuneError {
					return pair, i + 12
				}
			}
			return utf8.RuneError, i + 6
		}
		return r, i + 6
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	default: // \" \\ \/
		return rune(e), i + 2
	}
}

// hex4 reads the four hex digits of a \u escape at raw[i].
func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[i:i+4]), 16, 16)
	return rune(n), err == nil
}

// marshal writes v as JSON with the server's strings as they are (no
// HTML escapes), without a newline.
func marshal(v any) []byte {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return nil
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

// scanString reads the JSON string whose contents begin at raw[i] and
// returns the index of its closing quote, and whether it could pass for
// mcpsandbox's: a line of it reads as beginning "mcpsandbox", or it is
// HintMeta.
func scanString(raw []byte, i int) (end int, hit bool) {
	var h lineHead
	key := 0 // how much of HintMeta it matched; -1: it is not
	for i < len(raw) {
		if h.done && key < 0 {
			// Only the next line can matter: skip to what may begin a
			// line break (an escape, U+0085, U+2028, U+2029) or end the
			// string.
			if i = skipToBreak(raw, i); i == len(raw) {
				break
			}
		}
		if raw[i] == '"' {
			return i, h.passes() || key == len(HintMeta)
		}
		r, next := jsonRune(raw, i)
		i = next
		if key >= 0 && key < len(HintMeta) && r == rune(HintMeta[key]) {
			key++
		} else {
			key = -1
		}
		if isLineBreak(r) {
			if h.passes() {
				return skipString(raw, i), true
			}
			h = lineHead{}
			continue
		}
		h.add(r)
	}
	return len(raw), h.passes()
}

// skipToBreak returns the index of the first byte from raw[i] on that
// mayBreak, or len(raw): eight plain ASCII bytes at a time.
func skipToBreak(raw []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	has := func(w uint64, b byte) bool { x := w ^ ones*uint64(b); return (x-ones)&^x&highs != 0 }
	for i+8 <= len(raw) {
		if w := binary.LittleEndian.Uint64(raw[i:]); w&highs == 0 && !has(w, '"') && !has(w, '\\') {
			i += 8
			continue
		}
		for end := i + 8; i < end; i++ {
			if mayBreak[raw[i]] {
				return i
			}
		}
	}
	for ; i < len(raw); i++ {
		if mayBreak[raw[i]] {
			return i
		}
	}
	return i
}

// mayBreak are the bytes of a JSON string that may begin a line break or
// end it: the escape, the lead bytes of U+0085 and of U+2028 and U+2029,
// the quote. A string's contents hold no raw control character.
var mayBreak = [256]bool{'"': true, '\\': true, 0xC2: true, 0xE2: true}

// skipString returns the index of the closing quote of the string raw[i]
// lies in.
func skipString(raw []byte, i int) int {
	for ; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(raw)
}
