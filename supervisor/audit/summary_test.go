package audit

import (
	"strings"
	"testing"
)

// What a person is asked to approve shows the arguments as the audit line
// does: secret-looking keys and in-string secrets masked, long ones cut.
func TestSummaryMasksAsTheAuditDoes(t *testing.T) {
	got := Summary([]byte(`{"path":"/w/a","apiKey":"sk-live-1","cfg":{"state":"s3cr3t"},"url":"https://u:pw@example.com/"}`), []string{"state"}, nil, 1<<10)
	for _, secret := range []string{"sk-live-1", "s3cr3t", ":pw@"} {
		if strings.Contains(got, secret) {
			t.Errorf("summary shows %q: %s", secret, got)
		}
	}
	if !strings.Contains(got, `"path":"/w/a"`) {
		t.Errorf("summary lost the path: %s", got)
	}
	if long := Summary([]byte(`{"content":"`+strings.Repeat("x", 4000)+`"}`), nil, nil, 512); len(long) > 700 {
		t.Errorf("a 4 KB argument gave a %d-byte summary", len(long))
	}
	if got := Summary([]byte(`{"a":`), nil, nil, 512); got != "(arguments that are not JSON)" {
		t.Errorf("broken JSON: %s", got)
	}
}
