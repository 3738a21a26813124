package diagnose

import (
	"bytes"
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
