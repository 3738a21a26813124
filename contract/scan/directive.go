package scan

import (
	"regexp"
	"strings"
)

// A directive is wording aimed at the model rather than describing the
// tool: the marks of tool poisoning. The list is short on purpose (a
// finding of high severity holds the item), each entry written against
// the normalized text (lower case, one space, no invisible characters).
type directive struct {
	id       string
	severity Severity
	re       *regexp.Regexp
	why      string
	needles  []string // one of them is in every match: the regexp runs only about them (findNear)
}

var directives = []directive{
	{"pseudo-tag", High, regexp.MustCompile(`<\s*/?\s*(important|system|instructions?|secret|hidden|admin|critical)\s*>|\[\s*/?\s*(system|important|instructions?)\s*\]|<\|?\s*(im_start|im_end|system)\s*\|?>`),
		"poses as the host's or the system's own words", []string{"<", "["}},
	{"ignore-previous", High, regexp.MustCompile(`\b(ignore|disregard|forget|override)( all| any)?( of)?( the| your| my)? (previous|prior|above|earlier|preceding|other|system|original) (instructions?|directions?|prompts?|rules|messages|guidelines|context)\b`),
		"tells the model to drop its instructions", []string{"ignore", "disregard", "forget", "override"}},
	{"hide-from-user", High, regexp.MustCompile(`\b(do not|don't|dont|never|must not|should not) (tell|inform|notify|alert|mention|reveal|show|disclose|let)( this| it| that| anything)?( to)? (the )?user\b|\bwithout (telling|informing|notifying|alerting|asking|showing) the user\b|\bthe user (must|should) (not|never) (know|see|notice|be told|find out)\b|\b(keep|hide) (this|it) (secret )?from the user\b`),
		"tells the model to keep something from the user", []string{"user"}},
	{"read-first", High, regexp.MustCompile(`\bbefore (using|calling|invoking|running|executing|you use|you call) (this|the|any|these) (tool|function|tools|functions)\b[^.!?]{0,160}?\b(read|open|cat|load|fetch|send|pass|include|upload|call|run|execute)\b`),
		"tells the model to do something else first", []string{"before"}},
	{"pass-contents", Medium, regexp.MustCompile(`\b(pass|send|put|include|provide|append|attach|add)( its| their| the| it'?s| that| this) (full |entire |whole )?(content|contents|text|value|output)( of [^ ]+)? (as|in|into|via|to) (the |a |an )?('|"|` + "`" + `)?[a-z_]+`),
		"tells the model to put contents into an argument", []string{"content", "text", "value", "output"}},
	{"role-override", High, regexp.MustCompile(`\bnew instructions ?:|\b(override|replace|ignore) (the |your )?system prompt\b|\byou are now (in )?(developer|admin|god|jailbreak|dan)\b`),
		"tells the model to take another role", []string{"instructions", "system prompt", "you are now"}},
}

// directiveMatch is one directive found in a normalized string.
type directiveMatch struct {
	d     directive
	text  string
	start int
}

func findDirectives(norm string) []directiveMatch {
	var out []directiveMatch
	for _, d := range directives {
		if loc := findNear(d.re, norm, d.needles, 120, 320); loc != nil {
			out = append(out, directiveMatch{d, norm[loc[0]:loc[1]], loc[0]})
		}
	}
	return out
}

// findNear is re's first match in s that lies about an occurrence of one
// of needles: re runs only on windows of s (whole words) around them, since
// Go's regexps scan a pattern without a literal prefix slowly, and every
// match of these patterns holds a needle within back bytes of its start
// and ahead bytes of its end. Windows never overlap, so the work is linear
// in s whatever a server repeats.
func findNear(re *regexp.Regexp, s string, needles []string, back, ahead int) []int {
	next := make([]int, len(needles)) // each needle's next occurrence at or after pos (-1: none left)
	for i := range needles {
		next[i] = strings.Index(s, needles[i])
	}
	for pos := 0; pos < len(s); {
		at := -1
		for i, n := range needles {
			if next[i] >= 0 && next[i] < pos {
				if j := strings.Index(s[pos:], n); j >= 0 {
					next[i] = pos + j
				} else {
					next[i] = -1
				}
			}
			if next[i] >= 0 && (at < 0 || next[i] < at) {
				at = next[i]
			}
		}
		if at < 0 {
			return nil
		}
		from, to := wordStart(s, max(at-back, pos)), wordEnd(s, min(at+ahead, len(s)))
		if loc := re.FindStringIndex(s[from:to]); loc != nil {
			return []int{from + loc[0], from + loc[1]}
		}
		pos = max(to, at+1)
	}
	return nil
}

// wordStart moves i back to the start of the word it is in.
func wordStart(s string, i int) int {
	for i > 0 && s[i-1] != ' ' {
		i--
	}
	return i
}

// wordEnd moves i on to the end of the word it is in.
func wordEnd(s string, i int) int {
	for i < len(s) && s[i] != ' ' {
		i++
	}
	return i
}
