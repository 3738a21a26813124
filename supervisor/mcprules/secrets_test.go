package mcprules

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

const ghToken = "ghp_" + "R8x2Lk9QzT4vB7nW1mC6pJ3sD5fG0hY2aE8u"

// A tools/call carrying a token is refused with its path and format, never
// the value; the message names the opt-out the user's way.
func TestSecretInArgumentsRefused(t *testing.T) {
	ru := New(policy.Default(), Options{Setting: policy.FlagOf})
	v, _ := request(t, ru, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/tmp/x","content":"token=`+ghToken+`\n"}}}`)
	ref := v.Refusal
	if ref == nil || ref.Kind != SecretInArguments || ref.Path != "arguments.content" || ref.Secret != "github-token" {
		t.Fatalf("refusal %+v", ref)
	}
	want := `tools/call "write_file" refused: arguments.content holds what looks like a GitHub token (github-token); mcpsandbox never passes secrets to a server: take it out of the arguments, or, if this server is meant to get it, allow it with --no-secret-scan`
	if ref.Message != want {
		t.Errorf("message\n%s\nwant\n%s", ref.Message, want)
	}
	if strings.Contains(ref.Message+ref.Reason, ghToken[4:]) {
		t.Error("the refusal shows the token")
	}
}

// --no-secret-scan lets it through; _meta is never looked into; a
// --secret-pattern adds a format.
func TestSecretScanSettings(t *testing.T) {
	call := func(p policy.Policy, params string) *Refusal {
		ru := New(p, Options{})
		if ru == nil {
			return nil // no rules: the relay relays it
		}
		v, _ := request(t, ru, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`)
		return v.Refusal
	}
	withToken := `{"name":"echo","arguments":{"text":"` + ghToken + `"}}`
	off := policy.Default()
	off.NoSecretScan = true
	if ref := call(off, withToken); ref != nil {
		t.Errorf("--no-secret-scan: refused %+v", ref)
	}
	if ref := call(policy.Default(), `{"name":"echo","arguments":{"text":"hi"},"_meta":{"token":"`+ghToken+`"}}`); ref != nil {
		t.Errorf("_meta: refused %+v", ref)
	}
	extra := policy.Default()
	extra.SecretPatterns = []string{"acme-key=acme_[A-Za-z0-9]{32}"}
	ref := call(extra, `{"name":"echo","arguments":{"items":["a",{"k":"acme_`+strings.Repeat("x1Y", 11)+`"}]}}`)
	if ref == nil || ref.Path != "arguments.items[1].k" || ref.Secret != "acme-key" {
		t.Errorf("--secret-pattern: refusal %+v", ref)
	}
	if ref := call(extra, `{"name":"echo","arguments":{"text":"acme_short"}}`); ref != nil {
		t.Errorf("--secret-pattern, no match: refused %+v", ref)
	}
}

// docs/secrets.md shows the message a user sees, as the rule writes it.
func TestSecretsDocShowsTheMessage(t *testing.T) {
	doc, err := os.ReadFile("../../docs/secrets.md")
	if err != nil {
		t.Fatal(err)
	}
	key := `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n`
	v, _ := request(t, New(policy.Default(), Options{Setting: policy.FlagOf}),
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/home/you/.ssh/copy","content":"`+key+`"}}}`)
	if v.Refusal == nil || !strings.Contains(string(doc), "\n"+v.Refusal.Message+"\n") {
		t.Errorf("docs/secrets.md does not show the message %+v", v.Refusal)
	}
}
