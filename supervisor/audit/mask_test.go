package audit

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/secrets"
)

// The values of secret-looking keys are masked at every depth, in objects
// and arrays, whatever the keys' case; other values are kept.
func TestAuditMaskNestedArraysAndCase(t *testing.T) {
	m := newMasker(nil, nil)
	in := `{"query":"weather","Token":"s1","nested":{"PassWord":"s2","deeper":{"list":[{"api_key":"s3"},{"apiKey":["s4"]},{"x-auth-token":7}]}},` +
		`"Authorization":{"scheme":"s5"},"session_id":"s6","cookies":["s7"],"db_pwd":"s8","count":3,"ok":true,"none":null,"author":"Ada","keyword":"rain"}`
	out, cut, ok := m.maskJSON([]byte(in), argsMax)
	if !ok || cut {
		t.Fatalf("maskJSON: ok %v cut %v", ok, cut)
	}
	for i := 1; i <= 8; i++ {
		if s := "s" + string(rune('0'+i)); strings.Contains(string(out), `"`+s+`"`) {
			t.Errorf("secret %s kept in %s", s, out)
		}
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("masked arguments are not JSON: %v\n%s", err, out)
	}
	want := `{"query":"weather","Token":"***","nested":{"PassWord":"***","deeper":{"list":[{"api_key":"***"},{"apiKey":"***"},{"x-auth-token":"***"}]}},` +
		`"Authorization":"***","session_id":"***","cookies":"***","db_pwd":"***","count":3,"ok":true,"none":null,"author":"Ada","keyword":"rain"}`
	if string(out) != want {
		t.Errorf("masked\n%s\nwant\n%s", out, want)
	}
}

// --audit-mask globs add to the built-in ones, case-insensitively.
func TestAuditMaskCustomPatterns(t *testing.T) {
	in := `{"PIN":"1234","otp_code":"99","pinned":"yes"}`
	out, _, _ := newMasker([]string{"pin", "OTP_*"}, nil).maskJSON([]byte(in), argsMax)
	if want := `{"PIN":"***","otp_code":"***","pinned":"yes"}`; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
	out, _, _ = newMasker(nil, nil).maskJSON([]byte(in), argsMax)
	if string(out) != in {
		t.Errorf("without --audit-mask got %s, want it unchanged", out)
	}
}

// Secrets inside strings: URL userinfo, secret-looking query and fragment
// parameters, bearer tokens.
func TestAuditMaskInsideStrings(t *testing.T) {
	m := newMasker(nil, nil)
	for in, want := range map[string]string{
		"https://ann:hunter2@example.com/x?token=abc&page=2":                 "https://ann:***@example.com/x?token=***&page=2",
		"https://ghp_abcdef@github.com/o/r.git":                              "https://***@github.com/o/r.git",
		"see postgres://u:pw@db:5432/app and s3://b/k?X-Amz-Credential=AKIA": "see postgres://u:***@db:5432/app and s3://b/k?X-Amz-Credential=***",
		"https://app/cb#access_token=xyz&state=1":                            "https://app/cb#access_token=***&state=1",
		"Authorization: Bearer eyJhbGciOi.x.y":                               "Authorization: Bearer ***",
		"file:///home/ann/notes.txt":                                         "file:///home/ann/notes.txt",
		"a=b c=d":                                                            "a=b c=d",
	} {
		if got := m.maskText(in); got != want {
			t.Errorf("maskText(%q) = %q, want %q", in, got, want)
		}
	}
}

// Long values are cut with their length noted, deep or large arguments cut
// to valid JSON, and the cut is reported.
func TestAuditMaskBoundsSizes(t *testing.T) {
	m := newMasker(nil, nil)
	long := strings.Repeat("é", 1000)
	out, cut, ok := m.maskJSON([]byte(`{"text":"`+long+`"}`), argsMax)
	if !ok || cut || len(out) > 2*valueMax || !strings.Contains(string(out), "… (2000 bytes)") {
		t.Errorf("long value: ok %v cut %v, %d bytes: %.80s", ok, cut, len(out), out)
	}
	many := `[` + strings.Repeat(`{"a":"`+strings.Repeat("x", 200)+`","password":"p"},`, 1000) + `1]`
	out, cut, ok = m.maskJSON([]byte(many), argsMax)
	if !ok || !cut || len(out) > argsMax+1024 || !json.Valid(out) || strings.Contains(string(out), `"p"`) {
		t.Errorf("many values: ok %v cut %v valid %v, %d bytes", ok, cut, json.Valid(out), len(out))
	}
	deep := strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 100)
	out, cut, ok = m.maskJSON([]byte(deep), argsMax)
	if !ok || !cut || !json.Valid(out) {
		t.Errorf("deep value: ok %v cut %v valid %v: %s", ok, cut, json.Valid(out), out)
	}
	if _, _, ok := m.maskJSON([]byte(`{"a":`), argsMax); ok {
		t.Error("broken JSON reported as readable")
	}
}

// A string holding a key block or a token is masked whole whatever its
// key, a member name holding one too, and a caller's pattern counts.
func TestAuditMaskHidesSecretsByFormat(t *testing.T) {
	tok := "ghp_" + "R8x2Lk9QzT4vB7nW1mC6pJ3sD5fG0hY2aE8u"
	in := `{"content":"line\n` + tok + `\n","files":[{"text":"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oRCtAnBjo3oXoAoGCCqGSM49\n-----END EC PRIVATE KEY-----"}],"` + tok + `":1,"acme":"acme_0123456789abcdef","plain":"kept"}`
	sc := secrets.New(secrets.Pattern{Name: "acme", Re: regexp.MustCompile(`acme_[0-9a-f]{16}`)})
	out, _, _ := newMasker(nil, sc).maskJSON([]byte(in), argsMax)
	want := `{"content":"***","files":[{"text":"***"}],"***":1,"acme":"***","plain":"kept"}`
	if string(out) != want {
		t.Errorf("masked\n%s\nwant\n%s", out, want)
	}
}
