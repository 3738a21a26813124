package scan

import (
	"regexp"
	"strings"
)

// sensitivePath is a file or directory that holds credentials or a host's
// own configuration: a description that names one points the model at it.
type sensitivePath struct {
	what    string
	re      *regexp.Regexp
	needles []string // one of them is in every match (findNear)
}

// start is what may stand before a path that begins with a dot: not a
// letter or digit, so process.env is no .env file.
const start = `(^|[\s/~'"` + "`" + `(=:,\[{])`

var sensitivePaths = []sensitivePath{
	{"SSH keys", regexp.MustCompile(start + `\.ssh\b|\bid_(rsa|dsa|ecdsa|ed25519)(\.pub)?\b|\bauthorized_keys\b`), []string{"ssh", "id_", "authorized_keys"}},
	{"an environment file", regexp.MustCompile(start + `\.env(\.[a-z0-9_-]+)?\b`), []string{".env"}},
	{"cloud credentials", regexp.MustCompile(`\.aws/(credentials|config)\b|\.config/gcloud\b|\bapplication_default_credentials\.json\b|\.azure/(credentials|accesstokens\.json)|\.kube/config\b|\.docker/config\.json\b`), []string{".aws/", "gcloud", "application_default", ".azure/", ".kube/", ".docker/"}},
	{"credential files", regexp.MustCompile(start + `\.(netrc|npmrc|pypirc|git-credentials|gnupg|password-store)\b|/etc/(shadow|gshadow|sudoers)\b|/proc/(self|\d+)/environ\b`), []string{".netrc", ".npmrc", ".pypirc", ".git-credentials", ".gnupg", ".password-store", "/etc/", "/proc/"}},
	{"a host's MCP configuration", regexp.MustCompile(`\bclaude_desktop_config\.json\b|\.cursor/mcp\.json\b|\.vscode/mcp\.json\b|` + start + `\.claude\.json\b|\.claude/settings(\.local)?\.json\b|windsurf/mcp_config\.json\b|\bcline_mcp_settings\.json\b|\.gemini/settings\.json\b|\.codex/config\.toml\b|\.continue/config\.(json|yaml)\b|` + start + `\.mcp\.json\b|\bmcpsandbox/(lock|daemon(\.lock)?)\.json\b|\bdaemon\.lock\.json\b`), []string{"mcp.json", "mcp_config", "mcp_settings", "mcpsandbox/", "claude", "settings.json", ".continue/", "config.toml", "lock.json"}},
}

// readVerb near a sensitive path makes it a read of it.
var readVerb = regexp.MustCompile(`\b(read|reads|reading|cat|open|load|send|pass|include|upload|copy|attach|print|dump|contents? of)\b`)

// imperativeRead is a read verb in the imperative, beginning a clause
// ("…, read ~/.ssh/id_rsa", "then send it"): an order to read, not a
// description of what the tool reads ("reads ~/.aws/config").
var imperativeRead = regexp.MustCompile(`(^|[.;:!?,(]\s*|\b(then|and|first|always|must|please|should)\s+)(read|cat|open|load|send|pass|include|upload|copy|attach|print|dump|fetch|share|post)\b`)

// pathMatch is one sensitive path found in a normalized string.
type pathMatch struct {
	what, text string
	read       bool // a read verb is near
	ordered    bool // an imperative read verb is near: the text orders the read
}

func findSensitivePaths(norm string) []pathMatch {
	var out []pathMatch
	for _, p := range sensitivePaths {
		loc := findNear(p.re, norm, p.needles, 40, 120)
		if loc == nil {
			continue
		}
		from, to := max(loc[0]-80, 0), min(loc[1]+80, len(norm))
		begin := loc[0]
		for begin > 0 && !strings.ContainsRune(" '\"`(=,[{<", rune(norm[begin-1])) {
			begin-- // the whole path: ~/.ssh, not /.ssh
		}
		end := loc[1]
		for end < len(norm) && !strings.ContainsRune(" '\"`),;]}>", rune(norm[end])) {
			end++ // the whole path: ~/.ssh/id_rsa, not ~/.ssh
		}
		path := strings.TrimRight(trimStart(norm[begin:end]), ".:")
		near := norm[from:to]
		out = append(out, pathMatch{p.what, path, readVerb.MatchString(near), imperativeRead.MatchString(near)})
	}
	return out
}

// trimStart drops the character start matched before a path.
func trimStart(s string) string {
	if len(s) > 1 && (s[0] == ' ' || s[0] == '\'' || s[0] == '"' || s[0] == '`' || s[0] == '(' || s[0] == '=' || s[0] == ':' || s[0] == ',' || s[0] == '[' || s[0] == '{') {
		return s[1:]
	}
	return s
}
