package pathrule

import "strings"

// Element makes a label (a server's name) one harmless path element: only
// letters, digits, '-', '_' and '.', no leading '.', at most 64 bytes,
// "server" when nothing is left. State directories and cgroups are named
// with it.
func Element(label string) string {
	clean := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			return c
		}
		return '_'
	}, label)
	clean = strings.TrimLeft(clean, ".")
	if len(clean) > 64 {
		clean = clean[:64]
	}
	if clean == "" {
		clean = "server"
	}
	return clean
}
