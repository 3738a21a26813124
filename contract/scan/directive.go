package scan

import "regexp"

// A directive is wording aimed at the model rather than describing the
// tool: the marks of tool poisoning. The list is short on purpose (a
// finding of high severity holds the item), each entry written against
// the normalized text (lower case, one space, no invisible characters).
type directive struct {
	id       string
	severity Severity
	re       *regexp.Regexp
	why      string
}

var directives = []directive{
	{"pseudo-tag", High, regexp.MustCompile(`<\s*/?\s*(important|system|instructions?|secret|hidden|admin|critical)\s*>|\[\s*/?\s*(system|important|instructions?)\s*\]|<\|?\s*(im_start|im_end|system)\s*\|?>`),
		"poses as the host's or the system's own words"},
	{"ignore-previous", High, regexp.MustCompile(`\b(ignore|disregard|forget|override)( all| any)?( of)?( the| your| my)? (previous|prior|above|earlier|preceding|other|system|original) (instructions?|directions?|prompts?|rules|messages|guidelines|context)\b`),
		"tells the model to drop its instructions"},
	{"hide-from-user", High, regexp.MustCompile(`\b(do not|don't|dont|never|must not|should not) (tell|inform|notify|alert|mention|reveal|show|disclose|let)( this| it| that| anything)?( to)? (the )?user\b|\bwithout (telling|informing|notifying|alerting|asking|showing) the user\b|\bthe user (must|should) (not|never) (know|see|notice|be told|find out)\b|\b(keep|hide) (this|it) (secret )?from the user\b`),
		"tells the model to keep something from the user"},
	{"read-first", High, regexp.MustCompile(`\bbefore (using|calling|invoking|running|executing|you use|you call) (this|the|any|these) (tool|function|tools|functions)\b[^.!?]{0,160}?\b(read|open|cat|load|fetch|send|pass|include|upload|call|run|execute)\b`),
		"tells the model to do something else first"},
	{"pass-contents", Medium, regexp.MustCompile(`\b(pass|send|put|include|provide|append|attach|add)( its| their| the| it'?s| that| this) (full |entire |whole )?(content|contents|text|value|output)( of [^ ]+)? (as|in|into|via|to) (the |a |an )?('|"|` + "`" + `)?[a-z_]+`),
		"tells the model to put contents into an argument"},
	{"role-override", High, regexp.MustCompile(`\bnew instructions ?:|\b(override|replace|ignore) (the |your )?system prompt\b|\byou are now (in )?(developer|admin|god|jailbreak|dan)\b`),
		"tells the model to take another role"},
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
		if loc := d.re.FindStringIndex(norm); loc != nil {
			out = append(out, directiveMatch{d, norm[loc[0]:loc[1]], loc[0]})
		}
	}
	return out
}
