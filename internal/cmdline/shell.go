package cmdline

import "strings"

// ShellWord quotes a word as a shell needs it to take it as it is: bare
// when it holds nothing a shell would split or expand, else in single
// quotes.
func ShellWord(a string) string {
	if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// ShellJoin is args as a command line a user can paste.
func ShellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = ShellWord(a)
	}
	return strings.Join(q, " ")
}
