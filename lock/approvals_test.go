package lock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var asked = time.Date(2026, 12, 5, 5, 0, 0, 0, time.UTC)

// writeCall is an approval of server-filesystem's write_file with args.
func writeCall(t *testing.T, args string) Approval {
	t.Helper()
	digest, err := ArgumentDigest([]byte(args))
	if err != nil {
		t.Fatal(err)
	}
	return Approval{Server: "npm+@modelcontextprotocol+server-filesystem", Name: "@modelcontextprotocol/server-filesystem",
		Tool: "write_file", Digest: digest, Summary: `{"path":"/tmp/a","content":"…"}`,
		Asked: asked, Expires: asked.Add(5 * time.Minute)}
}

func TestArgumentDigestIsTheCanonicalForm(t *testing.T) {
	d := func(args string) string {
		t.Helper()
		got, err := ArgumentDigest([]byte(args))
		if err != nil {
			t.Fatalf("ArgumentDigest(%s): %v", args, err)
		}
		return got
	}
	same := d(`{"path":"/tmp/a","content":"x"}`)
	if !validDigest(same) {
		t.Fatalf("digest %q is not sha256:HEX", same)
	}
	if got := d(" {\n \"content\" : \"x\", \"path\":\"/tmp/\\u0061\"}"); got != same {
		t.Errorf("key order, spacing and escapes changed the digest: %s != %s", got, same)
	}
	if got := d(`{"path":"/tmp/b","content":"x"}`); got == same {
		t.Error("other arguments have the same digest")
	}
	if d("") != d("{}") {
		t.Error("absent arguments do not digest as {}")
	}
	if _, err := ArgumentDigest([]byte(`{"a":`)); err == nil {
		t.Error("arguments that are not JSON have a digest")
	}
}

// TestConcurrentAsksShareOneApproval: a host that retries a call from
// several goroutines and processes at once gets one id for it, and each
// other call an id of its own; none is lost.
func TestConcurrentAsksShareOneApproval(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock.json")
	const n = 8
	same, other := make([]string, n), make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			if same[i], err = AskApproval(path, writeCall(t, `{"path":"/tmp/a"}`), asked); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			var err error
			if other[i], err = AskApproval(path, writeCall(t, fmt.Sprintf(`{"path":"/tmp/%d"}`, i)), asked); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	for i := range n {
		if same[i] != same[0] {
			t.Errorf("the same call got ids %s and %s", same[0], same[i])
		}
		ids[other[i]] = true
	}
	if ids[same[0]] || len(ids) != n {
		t.Errorf("other calls got ids %v (the same call %s), want %d distinct", other, same[0], n)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.OpenApprovals(asked); len(got) != n+1 {
		t.Errorf("the lock holds approvals %v, want %d", got, n+1)
	}
	for id := range ids {
		if !validApprovalID(id) {
			t.Errorf("id %q is not 10 lower-case base32 characters", id)
		}
	}
}

func TestAskReusesTheOpenApprovalUntilItExpires(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock.json")
	a := writeCall(t, `{"path":"/tmp/a"}`)
	id, err := AskApproval(path, a, asked)
	if err != nil {
		t.Fatal(err)
	}
	again, err := AskApproval(path, a, asked.Add(time.Minute))
	if err != nil || again != id {
		t.Fatalf("asking again a minute later = %q, %v; want the open %q", again, err, id)
	}
	later := a
	later.Asked, later.Expires = a.Expires, a.Expires.Add(5*time.Minute)
	fresh, err := AskApproval(path, later, a.Expires)
	if err != nil || fresh == id {
		t.Fatalf("asking after expiry = %q, %v; want a new id", fresh, err)
	}
	f, _ := Load(path)
	if _, ok := f.Approvals[id]; ok || len(f.Approvals) != 1 {
		t.Errorf("the expired approval %s was not dropped: %v", id, f.OpenApprovals(asked))
	}

	big := writeCall(t, `{"path":"/tmp/big"}`)
	big.Summary = strings.Repeat("x", 1<<20)
	id, err = AskApproval(path, big, asked)
	if err != nil {
		t.Fatal(err)
	}
	f, _ = Load(path)
	if got := []rune(f.Approvals[id].Summary); len(got) != maxSummary || got[len(got)-1] != '…' {
		t.Errorf("a 1 MiB summary is kept as %d characters, want %d ending in …", len(got), maxSummary)
	}
}

// TestApprovalIsTakenOnce: open until approved, then good for exactly one
// call with the same arguments; other arguments never take it.
func TestApprovalIsTakenOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock.json")
	a := writeCall(t, `{"path":"/tmp/a","content":"x"}`)
	id, err := AskApproval(path, a, asked)
	if err != nil {
		t.Fatal(err)
	}
	take := func(digest string, want ApprovalState) *Approval {
		t.Helper()
		state, got, gotID, err := TakeApproval(path, a.Server, a.Tool, digest, asked.Add(time.Minute))
		if err != nil || state != want {
			t.Fatalf("TakeApproval = %v, %v; want %v", state, err, want)
		}
		if want != ApprovalNone && gotID != id {
			t.Errorf("TakeApproval id %q, want %q", gotID, id)
		}
		return got
	}
	take(a.Digest, ApprovalOpen)
	approved, err := Approve(path, id, asked.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if approved.Tool != "write_file" || approved.Summary != a.Summary || approved.Approved == nil {
		t.Errorf("Approve returned %+v", approved)
	}
	replay := writeCall(t, `{"path":"/etc/passwd","content":"x"}`)
	take(replay.Digest, ApprovalNone)
	if got := take(a.Digest, ApprovalGranted); got == nil || !got.Approved.Equal(asked.Add(30*time.Second)) {
		t.Errorf("granted approval %+v", got)
	}
	take(a.Digest, ApprovalNone)
	if _, err := Approve(path, id, asked.Add(time.Minute)); err == nil || !strings.Contains(err.Error(), "mcpsandbox approve --list") {
		t.Errorf("approving a taken id: %v, want an error naming the fix", err)
	}
}

func TestExpiredApprovalsAreRefusedAndDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock.json")
	a := writeCall(t, `{}`)
	id, err := AskApproval(path, a, asked)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Approve(path, id, a.Expires)
	if want := fmt.Sprintf("approval %s expired at 2026-12-05T05:05:00Z: call the tool again to be asked anew", id); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Approve after expiry: %v\nwant %s…", err, want)
	}
	if _, err := Approve(path, id, asked); err != nil {
		t.Fatalf("Approve before expiry: %v", err)
	}
	if state, _, _, err := TakeApproval(path, a.Server, a.Tool, a.Digest, a.Expires); err != nil || state != ApprovalExpired {
		t.Errorf("an approved call taken after expiry: %v, %v; want expired", state, err)
	}
	if state, _, _, _ := TakeApproval(path, a.Server, a.Tool, a.Digest, a.Expires); state != ApprovalNone {
		t.Errorf("taken again: %v, want none", state)
	}
	if f, _ := Load(path); f.Approvals != nil {
		t.Errorf("left in the lock: %v", f.Approvals)
	}
	if _, err := AskApproval(path, Approval{Server: "s", Tool: "t", Digest: a.Digest, Asked: asked, Expires: asked.Add(25 * time.Hour)}, asked); err == nil {
		t.Error("an approval that lasts more than a day was asked")
	}
}

func TestApproveUnknownIDNamesTheFix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock.json")
	_, err := Approve(path, "abcdefghij", asked)
	want := `no approval "abcdefghij" is waiting in ` + path + `: check the id in the error the call got (mcpsandbox approve --list shows the waiting ones`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Approve of an unknown id: %v\nwant %s…", err, want)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed Approve wrote the lock: %v", err)
	}
}

func TestHandEditedApprovalsAreRefusedInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock.json")
	id, err := AskApproval(path, writeCall(t, `{"path":"/tmp/a"}`), asked)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	good := string(data)
	if f, err := Parse(path, data); err != nil || string(f.Marshal()) != good {
		t.Fatalf("a lock with an approval does not read back as written: %v\n%s", err, good)
	}
	entry := fmt.Sprintf("approvals[%q]", id)
	cases := []struct {
		name, old, new, at, want string
	}{
		{"an id made up", `"` + id + `"`, `"let-me-in"`, `"let-me-in"`,
			`approvals["let-me-in"]: "let-me-in" is no id mcpsandbox makes (10 characters of a-z and 2-7)`},
		{"a digest edited", `"sha256:`, `"sha256:z`, `"sha256:z`, entry + `.digest "sha256:z`},
		{"no tool", `"tool": "write_file"`, `"tool": ""`, `""`, entry + ` has no tool`},
		{"an expiry pushed out", `"expires": "2026-12-05T05:05:00Z"`, `"expires": "2027-12-05T05:05:00Z"`, `"2027-`,
			entry + `.expires is more than a day after its asked time`},
		{"approved before it was asked", `"expires":`, `"approved": "2026-12-04T00:00:00Z", "expires":`, `"2026-12-04`,
			entry + `.approved is not between its asked and expires times`},
		{"an unknown key", `"tool":`, `"granted": true, "tool":`, `"granted"`,
			`unknown key "granted" in ` + entry},
		{"null", `"` + id + `": {`, `"` + id + `": null, "x": {`, `null`, entry + ` is null`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			edited := strings.Replace(good, c.old, c.new, 1)
			if edited == good {
				t.Fatalf("%q is not in the lock:\n%s", c.old, good)
			}
			p := writeFile(t, []byte(edited))
			_, err := Load(p)
			var le *Error
			if !errors.As(err, &le) {
				t.Fatalf("Load = %v, want a *lock.Error", err)
			}
			want := pos(p, edited, strings.Index(edited, c.at)) + ": " + c.want
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error:\n%v\nwant:\n%s…", err, want)
			}
			if _, _, _, err := TakeApproval(p, "npm+@modelcontextprotocol+server-filesystem", "write_file", "", asked); err == nil {
				t.Error("TakeApproval used the edited lock")
			}
		})
	}
}
