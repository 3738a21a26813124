package secrets

import (
	"regexp"
	"strings"
)

// format is one kind of secret. A default format's match starts at a place
// candidates finds, and re, anchored there, says whether the text is one;
// a caller's pattern, or the AWS secret key, is matched anywhere in a
// string (anchor, its fixed prefix, only tells Scan's quick look where to
// look).
type format struct {
	name, what string // "github-token", "a GitHub token"
	anchor     string
	re         *regexp.Regexp
	// window bounds the text re is given after the anchor: no format is
	// longer, and a huge string is not read again from every anchor.
	window int
	// boundary: the anchor must not follow a letter or digit, so that an
	// anchor inside a longer word or a base64 blob is not taken for one.
	boundary bool
	// ok, when not nil, tells a token from text that only looks like one.
	ok func(match string) bool
}

// The default formats, in the order a place that could start two is
// tried. Private key blocks need a body after the header, so a document
// that only names the header is not refused.
var (
	privateKey = &format{name: "private-key", what: "a private key", window: 4096,
		re: regexp.MustCompile(`\A-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:\s*[A-Za-z-]+: [^\n]*)*\s+[A-Za-z0-9+/=]{40}`)}
	githubToken = &format{name: "github-token", what: "a GitHub token", window: 64, boundary: true,
		re: regexp.MustCompile(`\Agh[pousr]_[A-Za-z0-9]{36}`)}
	githubPAT = &format{name: "github-token", what: "a GitHub token", window: 128, boundary: true,
		re: regexp.MustCompile(`\Agithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}`)}
	gitlabToken = &format{name: "gitlab-token", what: "a GitLab token", window: 128, boundary: true,
		re: regexp.MustCompile(`\Aglpat-[A-Za-z0-9_-]{20,}`)}
	slackToken = &format{name: "slack-token", what: "a Slack token", window: 256, boundary: true,
		re: regexp.MustCompile(`\Axox[abposr]-[0-9]+-[A-Za-z0-9-]{8,}`)}
	slackAppToken = &format{name: "slack-token", what: "a Slack token", window: 256, boundary: true,
		re: regexp.MustCompile(`\Axapp-[0-9]+-[A-Za-z0-9-]{20,}`)}
	awsKeyID = &format{name: "aws-access-key-id", what: "an AWS access key id", window: 32, boundary: true,
		re: regexp.MustCompile(`\A(?:AKIA|ASIA)[A-Z0-9]{16}(?:[^A-Za-z0-9]|\z)`)}
	anthropicKey = &format{name: "anthropic-key", what: "an Anthropic key", window: 256, boundary: true,
		re: regexp.MustCompile(`\Ask-ant-[a-z]+[0-9]*-[A-Za-z0-9_-]{32,}`)}
	openAIKey = &format{name: "openai-key", what: "an OpenAI key", window: 256, boundary: true,
		re: regexp.MustCompile(`\Ask-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,}`), ok: isOpenAIKey}
	jwt = &format{name: "jwt", what: "a JSON Web Token", window: 8192, boundary: true,
		re: regexp.MustCompile(`\AeyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}`)}
)

// awsSecretKey is an AWS secret access key: 40 characters of base64, told
// from any other 40 only by an access key id beside it.
var awsSecretKey = &format{name: "aws-secret-access-key", what: "an AWS secret access key",
	re: regexp.MustCompile(`(?:\A|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|\z)`)}

// isOpenAIKey tells a key (random letters and digits) from prose such as
// "sk-learn-style-preprocessing-pipeline", and is no Anthropic key.
func isOpenAIKey(m string) bool {
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

// in reports whether s holds f's secret (f is a caller's pattern, or the
// AWS secret key).
func (f *format) in(s string) bool { return f.re.MatchString(s) }

// defaultIn is the first default format s holds, or nil.
func defaultIn(s string) (found *format) {
	candidates(s, func(f *format, i int) bool {
		if f.at(s, i) {
			found = f
		}
		return found == nil
	})
	return found
}
