package secrets

import (
	"regexp"
	"strings"
)

// format is one kind of secret. A match starts where one of its anchors
// does, in a decoded string; re, anchored at the start, says whether the
// text there is one.
type format struct {
	name, what string // "github-token", "a GitHub token"
	anchors    []string
	re         *regexp.Regexp
	// window bounds the text re is given after the anchor: no format is
	// longer, and a huge string is not read again from every anchor.
	window int
	// boundary: the anchor must not follow a letter or digit, so that an
	// anchor inside a longer word or a base64 blob is not taken for one.
	boundary bool
	// ok, when not nil, tells a token from text that only looks like one.
	ok func(match string) bool
	// whole: re is matched against the whole string (a caller's pattern,
	// the AWS secret key); anchors, if any, only tell Scan where to look.
	whole bool
}

// The default formats. Private key blocks need a body after the header, so
// a document that only names the header is not refused.
var defaults = []*format{
	{name: "private-key", what: "a private key", anchors: []string{"-----BEGIN"}, window: 4096,
		re: regexp.MustCompile(`\A-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:\s*[A-Za-z-]+: [^\n]*)*\s+[A-Za-z0-9+/=]{40}`)},
	{name: "github-token", what: "a GitHub token", anchors: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, window: 64, boundary: true,
		re: regexp.MustCompile(`\Agh[pousr]_[A-Za-z0-9]{36}`)},
	{name: "github-token", what: "a GitHub token", anchors: []string{"github_pat_"}, window: 128, boundary: true,
		re: regexp.MustCompile(`\Agithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}`)},
	{name: "gitlab-token", what: "a GitLab token", anchors: []string{"glpat-"}, window: 128, boundary: true,
		re: regexp.MustCompile(`\Aglpat-[A-Za-z0-9_-]{20,}`)},
	{name: "slack-token", what: "a Slack token", anchors: []string{"xox"}, window: 256, boundary: true,
		re: regexp.MustCompile(`\Axox[abposr]-[0-9]+-[A-Za-z0-9-]{8,}`)},
	{name: "slack-token", what: "a Slack token", anchors: []string{"xapp-"}, window: 256, boundary: true,
		re: regexp.MustCompile(`\Axapp-[0-9]+-[A-Za-z0-9-]{20,}`)},
	{name: "aws-access-key-id", what: "an AWS access key id", anchors: []string{"AKIA", "ASIA"}, window: 32, boundary: true,
		re: regexp.MustCompile(`\A(?:AKIA|ASIA)[A-Z0-9]{16}(?:[^A-Za-z0-9]|\z)`)},
	{name: "anthropic-key", what: "an Anthropic key", anchors: []string{"sk-ant-"}, window: 256, boundary: true,
		re: regexp.MustCompile(`\Ask-ant-[a-z]+[0-9]*-[A-Za-z0-9_-]{32,}`)},
	{name: "openai-key", what: "an OpenAI key", anchors: []string{"sk-"}, window: 256, boundary: true,
		re: regexp.MustCompile(`\Ask-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,}`), ok: openAIKey},
	{name: "jwt", what: "a JSON Web Token", anchors: []string{"eyJ"}, window: 8192, boundary: true,
		re: regexp.MustCompile(`\AeyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}`)},
}

// awsSecretKey is an AWS secret access key: 40 characters of base64, told
// from any other 40 only by an access key id beside it.
var awsSecretKey = &format{name: "aws-secret-access-key", what: "an AWS secret access key", whole: true,
	re: regexp.MustCompile(`(?:\A|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|\z)`)}

// openAIKey tells a key (random letters and digits) from prose such as
// "sk-learn-style-preprocessing-pipeline", and is no Anthropic key.
func openAIKey(m string) bool {
	if strings.HasPrefix(m, "sk-ant-") {
		return false
	}
	var upper, lower, digit bool
	for i := 3; i < len(m); i++ {
		switch c := m[i]; {
		case 'A' <= c && c <= 'Z':
			upper = true
		case 'a' <= c && c <= 'z':
			lower = true
		case '0' <= c && c <= '9':
			digit = true
		}
	}
	return upper && lower && digit
}

// isWordByte reports whether c continues a word: an anchor right after one
// is inside it.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// at reports whether s holds f's secret at i, where one of its anchors is.
func (f *format) at(s string, i int) bool {
	if f.boundary && i > 0 && isWordByte(s[i-1]) {
		return false
	}
	w := s[i:]
	if len(w) > f.window {
		w = w[:f.window]
	}
	m := f.re.FindString(w)
	return m != "" && (f.ok == nil || f.ok(m))
}

// in reports whether s holds f's secret.
func (f *format) in(s string) bool {
	if f.whole {
		return f.re.MatchString(s)
	}
	for _, a := range f.anchors {
		for off := 0; ; {
			i := strings.Index(s[off:], a)
			if i < 0 {
				break
			}
			if f.at(s, off+i) {
				return true
			}
			off += i + 1
		}
	}
	return false
}
