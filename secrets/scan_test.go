package secrets

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// samples are one value of each default format, shaped like the real
// ones (made up here: none was ever a live credential).
func samples(t testing.TB) map[string]string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	ec, _ := x509.MarshalECPrivateKey(key)
	return map[string]string{
		"private-key":           string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"private-key/ec":        string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ec})),
		"private-key/openssh":   "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBqL1b0fYbT3QbB0mZ2qv7gQpZ9X3m3rX1mQbq4m9F8hQAAAJgl9k3uJfZN\n-----END OPENSSH PRIVATE KEY-----\n",
		"github-token":          "ghp_" + "R8x2Lk9QzT4vB7nW1mC6pJ3sD5fG0hY2aE8u",
		"github-token/oauth":    "gho_" + "16C7e42F292c6912E7710c838347Ae178B4a",
		"github-token/pat":      "github_pat_" + "11ABCDEFG0abcdefghijkl_" + strings.Repeat("aB3dE5fG7h", 5) + "J9kL1mN3p",
		"gitlab-token":          "glpat-" + "xK3m9Pq2Rz7Tv4Wy8Bn1",
		"slack-token":           "xoxb-" + "2634728151-4926018273645-vQ8mZ2kT9xR4pL7nW3cY6bH1",
		"slack-token/app":       "xapp-" + "1-A02B3C4D5E6-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
		"aws-access-key-id":     "AKIA" + "IOSFODNN7EXAMPLE",
		"aws-access-key-id/sts": "ASIA" + "Y34FZKBOKMUTVV7A",
		"openai-key":            "sk-" + "proj-" + "Xq7vN2mK9pL4rT8wZ1cB5yH3jF6gD0sA_e-" + "Qm4Rn7Tp2Wv9Xz",
		"openai-key/legacy":     "sk-" + "T3BlbkFJ8mQ2xV7nR4pK9sL1wZ6cY3hB5dG0fJ2a",
		"anthropic-key":         "sk-" + "ant-api03-" + strings.Repeat("Zr8Kq2Wx7Mn4Pv9Ty", 5) + "AA",
		"jwt":                   "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
	}
}

func formatOf(name string) string { f, _, _ := strings.Cut(name, "/"); return f }

// escapeAll writes s as a JSON string of \u escapes only: nothing of it is
// in the raw bytes.
func escapeAll(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	b.WriteByte('"')
	return b.String()
}

func quote(s string) string { q, _ := json.Marshal(s); return string(q) }

// Each format is found at each depth, its path named, in document order.
func TestEachFormatAtEachDepth(t *testing.T) {
	sc := New()
	for name, secret := range samples(t) {
		for _, c := range []struct{ value, path string }{
			{`{"content":` + quote(secret) + `}`, "content"},
			{`{"config":{"auth":{"token":` + quote(secret) + `}},"n":1}`, "config.auth.token"},
			{`{"files":[{"content":"x"},{"content":"y"},{"content":` + quote("first line\n"+secret+"\nlast line") + `}]}`, "files[2].content"},
			{`{"content":` + escapeAll(secret) + `}`, "content"},
			{`{"env":{"API KEY":` + quote(secret) + `}}`, `env["API KEY"]`},
			{`[` + quote("prose, then "+secret+", then prose") + `]`, "[0]"},
		} {
			got, err := sc.Scan([]byte(c.value))
			if err != nil {
				t.Fatalf("%s in %s: %v", name, c.value, err)
			}
			if len(got) != 1 || got[0].Path != c.path || got[0].Secret != formatOf(name) {
				t.Errorf("%s in %.80s...: found %+v, want path %s", name, c.value, got, c.path)
			}
		}
	}
}

// A finding holds the path and the format, never the value, also when the
// secret is a member's name.
func TestFindingNeverHoldsTheValue(t *testing.T) {
	tok := samples(t)["github-token"]
	got, err := New().Scan([]byte(`{"headers":{` + quote(tok) + `:"x"},"other":{` + quote(tok) + `:` + quote(tok) + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Path != "headers" || !got[0].InName || got[2].Path != `other["<secret>"]` {
		t.Errorf("found %+v", got)
	}
	if s := fmt.Sprint(got); strings.Contains(s, tok[4:]) {
		t.Errorf("a finding shows the value: %s", s)
	}
}

// An AWS secret access key counts only beside an access key id.
func TestAWSSecretKeyOnlyBesideAKeyID(t *testing.T) {
	secret := "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	if got, _ := New().Scan([]byte(`{"s":` + quote(secret) + `}`)); len(got) != 0 {
		t.Errorf("40 characters alone: %+v", got)
	}
	got, _ := New().Scan([]byte(`{"id":"AKIA` + `IOSFODNN7EXAMPLE","secret":` + quote(secret) + `}`))
	if len(got) != 2 || got[1].Path != "secret" || got[1].Secret != "aws-secret-access-key" {
		t.Errorf("beside a key id: %+v", got)
	}
}

// A caller's pattern is found, with or without a fixed prefix.
func TestExtraPatterns(t *testing.T) {
	sc := New(Pattern{Name: "acme-key", Re: regexp.MustCompile(`acme_[A-Za-z0-9]{32}`)},
		Pattern{Name: "pin", Re: regexp.MustCompile(`(?i)pin:\s*\d{6}\b`)})
	for value, want := range map[string]string{
		`{"a":"key acme_` + strings.Repeat("Ab1", 10) + `Zz"}`:            "acme-key",
		`{"a":` + escapeAll("acme_"+strings.Repeat("Ab1", 10)+"Zz") + `}`: "acme-key",
		`{"a":{"b":["PIN: 123456"]}}`:                                     "pin",
		`{"a":"acme_short, pin 12"}`:                                      "",
	} {
		got, err := sc.Scan([]byte(value))
		if err != nil || want == "" && len(got) != 0 || want != "" && (len(got) != 1 || got[0].Secret != want) {
			t.Errorf("%s: found %+v (%v), want %q", value, got, err, want)
		}
	}
}

// Top-level members named to skip are not looked into.
func TestSkip(t *testing.T) {
	v := []byte(`{"_meta":{"t":"` + samples(t)["jwt"] + `"},"arguments":{}}`)
	if got, err := New().Scan(v, "_meta"); err != nil || len(got) != 0 {
		t.Errorf("found %+v (%v)", got, err)
	}
}

// Text that only resembles a secret is let through: what real tool calls
// carry.
func TestNoFalseFinding(t *testing.T) {
	blob := make([]byte, 48<<10)
	rand.Read(blob)
	for _, v := range []any{
		map[string]any{"path": "/home/user/project/src/main.go", "content": "package main\n\nfunc main() {\n\tprintln(\"hello <world> & \\\"you\\\"\")\n}\n"},
		map[string]any{"id": "3f2b8c1e-9d4a-4e6b-8f7a-2c5d1e0b9a34", "sha": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "commit": "6a85353b1f0e2d4c8a9b7e6f5d4c3b2a1f0e9d8c"},
		map[string]any{"integrity": "sha512-" + "Q2hlY2tzdW0gb2YgYSBwYWNrYWdlIHRhcmJhbGwsIGFzIG5wbSB3cml0ZXMgaXQgaW4gcGFja2FnZS1sb2NrLmpzb24uLi4uLi4uLi4uLg=="},
		map[string]any{"text": "Use sk-learn style pipelines; the task-management-system-for-everyone and the desk-lamp-with-usb-charger are on the risk-assessment-checklist-2024 page."},
		map[string]any{"text": "Keys look like -----BEGIN RSA PRIVATE KEY----- ... -----END RSA PRIVATE KEY-----; tokens start with ghp_ or glpat- or xoxb-."},
		map[string]any{"data": blob}, // base64 once marshalled
		map[string]any{"ids": []string{"AKIAWHATEVER", "ASIAN-FOOD", "eyJhbGciOi"}}, // prefixes without the rest
		map[string]any{"name": "github_pat_format", "url": "https://github.com/ghp_user/repo"},
		// The reference servers' own calls.
		map[string]any{"path": "/srv/notes/a.md", "edits": []map[string]any{{"oldText": "- [ ] ship v1.2-rc.1", "newText": "- [x] ship v1.2-rc.1 (see docs/release_notes.md)"}}, "dryRun": true},
		map[string]any{"owner": "octo-org", "repo": "hello_world", "path": "src/app.ts", "branch": "feature/sk-42_fix", "message": "fix: handle task-queue back-pressure", "content": "ZXhwb3J0IGNvbnN0IGEgPSAxOwo=", "sha": "95b966ae1c166bd92f8ae7d1c313e738c731dfc3"},
		map[string]any{"relations": []map[string]any{{"from": "AKIA_project", "to": "eyJ-parser", "relationType": "depends-on"}}},
		map[string]any{"messages": []map[string]any{{"role": "user", "content": map[string]any{"type": "text", "text": "Summarise base64 JSON like eyJhIjoxfQ== and eyJhIjoxfQ.eyJiIjoyfQ for me."}}}, "maxTokens": 100},
		map[string]any{"image": "iVBORw0KGgoAAAANSUhEUgAAABQAAAAUCAYAAACNiR0NAAAKsGlDQ1BJQ0MgUHJvZmlsZQAASImVlwdUU+kSgOfe9JDQEiIgJfQmSCeAlBBaAAXpYCMkAUKJMRBU7MriClZURLCs6KqIgo0idizYFsWC3QVZBNR1sWDDlXeBQ9jdd9575805c+a7c+efmf+e/z9nLgCdKZDJMlF1gCxpjjwyyI8dn5DIJvUABRiY0kEABaPNkvEiIsIAk1H7d/lwD5Bhe9t2ONe/v/+vosESZQsBkAiMk0XZwiyMj2H6SiiT5wDgdmN+kzk5smFuxZgpxxrE+MkwpwzxgPDADzaOrSDnHkuOkAnE60hN+5//eT5hvIVM58FlV7YHLIzKV0gNE8+0JwAA==", "mimeType": "image/png"},
		map[string]any{"requestId": "req_01HZX3K9Q7M2N4P6R8T0V2W4Y6", "trace": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	} {
		raw, _ := json.Marshal(v)
		if got, err := New().Scan(raw); err != nil || len(got) != 0 {
			t.Errorf("%.100s: found %+v (%v)", raw, got, err)
		}
	}
}

// A value that is not JSON, once decoded, is an error, never "no secret".
func TestNotJSON(t *testing.T) {
	for _, v := range []string{`{"a":"ghp_`, `{"a" "\u0067"}`, `{"a":"\q ghp_x"}`, `[1,"sk-"]x`} {
		if _, err := New().Scan([]byte(v)); err == nil {
			t.Errorf("%s: no error", v)
		}
	}
}
