package secrets

import "strings"

// The default formats are found through the rarer bytes inside their
// prefixes ('_' of ghp_, '-' of sk-, '.' after a JWT's header) with
// IndexByte, which runs at memory speed, rather than a search for each
// prefix, most of which begin with a letter common in any text.

// candidates calls yield with each place in s where a default format may
// start, in no particular order, until yield returns false.
func candidates(s string, yield func(f *format, at int) bool) {
	for _, id := range []string{"AKIA", "ASIA"} {
		for off := 0; ; {
			i := strings.Index(s[off:], id)
			if i < 0 {
				break
			}
			if !yield(awsKeyID, off+i) {
				return
			}
			off += i + 1
		}
	}
	if !eachByte(s, '_', func(i int) bool {
		switch {
		case i >= 3 && s[i-3:i-1] == "gh" && strings.IndexByte("pousr", s[i-1]) >= 0:
			return yield(githubToken, i-3)
		case i >= 6 && s[i-6:i] == "github":
			return yield(githubPAT, i-6)
		}
		return true
	}) {
		return
	}
	if !eachByte(s, '-', func(i int) bool {
		switch {
		case i >= 2 && s[i-2:i] == "sk":
			return yield(anthropicKey, i-2) && yield(openAIKey, i-2)
		case i >= 5 && s[i-5:i] == "glpat":
			return yield(gitlabToken, i-5)
		case i >= 4 && s[i-4:i-1] == "xox":
			return yield(slackToken, i-4)
		case i >= 4 && s[i-4:i] == "xapp":
			return yield(slackAppToken, i-4)
		case strings.HasPrefix(s[i:], "-----BEGIN"):
			return yield(privateKey, i)
		}
		return true
	}) {
		return
	}
	eachByte(s, '.', func(i int) bool {
		start := i
		for start > 0 && i-start < maxJWTHeader && isJWTByte(s[start-1]) {
			start--
		}
		for off := start; ; {
			j := strings.Index(s[off:i], "eyJ")
			if j < 0 {
				return true
			}
			if !yield(jwt, off+j) {
				return false
			}
			off += j + 1
		}
	})
}

// maxJWTHeader bounds how far back from a '.' a JWT's header is looked
// for: real ones are a few hundred bytes.
const maxJWTHeader = 4096

func isJWTByte(c byte) bool { return isWordByte(c) || c == '_' || c == '-' }

// eachByte calls fn with each index of c in s until fn returns false,
// reporting whether it never did.
func eachByte(s string, c byte, fn func(int) bool) bool {
	for off := 0; ; {
		i := strings.IndexByte(s[off:], c)
		if i < 0 {
			return true
		}
		if !fn(off + i) {
			return false
		}
		off += i + 1
	}
}
