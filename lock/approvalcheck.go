package lock

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tailscale/hujson"
)

// MaxApprovalLife bounds how long an approval may wait: a hand edit must
// not turn one approval into a standing grant.
const MaxApprovalLife = 24 * time.Hour

// approvalFix is the fix for an approvals entry mcpsandbox did not write.
const approvalFix = "remove this approval (the call is then asked anew), or restore the lock from version control: " +
	"approvals are written by the relay and granted with mcpsandbox approve ID, never by hand"

// approvals checks the approvals section's entries, each placed in the file.
func (c *checker) approvals(root *hujson.Value, approvals map[string]*Approval) error {
	if len(approvals) == 0 {
		return nil
	}
	section := member(root, "approvals")
	ids := make([]string, 0, len(approvals))
	for id := range approvals {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := c.approval(member(&section.Value, id), id, approvals[id]); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) approval(m *hujson.ObjectMember, id string, a *Approval) error {
	path := fmt.Sprintf("approvals[%q]", id)
	at := func(key string) int {
		if v := member(&m.Value, key); v != nil {
			return v.Value.StartOffset
		}
		return m.Value.StartOffset
	}
	if !validApprovalID(id) {
		return c.fail(m.Name.StartOffset, fmt.Sprintf("%s: %q is no id mcpsandbox makes (%d characters of a-z and 2-7)", path, id, idLen), approvalFix)
	}
	for _, req := range []struct{ key, value string }{{"server", a.Server}, {"tool", a.Tool}, {"digest", a.Digest}} {
		if req.value == "" {
			return c.fail(at(req.key), fmt.Sprintf("%s has no %s", path, req.key), approvalFix)
		}
	}
	if !validDigest(a.Digest) {
		return c.fail(at("digest"), fmt.Sprintf("%s.digest %q is not sha256: and 64 hex digits", path, a.Digest), approvalFix)
	}
	switch {
	case a.Asked.IsZero():
		return c.fail(at("asked"), path+" has no asked time", approvalFix)
	case a.Expires.IsZero():
		return c.fail(at("expires"), path+" has no expires time", approvalFix)
	case !a.Expires.After(a.Asked):
		return c.fail(at("expires"), path+".expires is not after its asked time", approvalFix)
	case a.Expires.Sub(a.Asked) > MaxApprovalLife:
		return c.fail(at("expires"), path+".expires is more than a day after its asked time", approvalFix)
	case a.Approved != nil && (a.Approved.Before(a.Asked) || !a.Approved.Before(a.Expires)):
		return c.fail(at("approved"), path+".approved is not between its asked and expires times", approvalFix)
	}
	return nil
}

func validApprovalID(id string) bool {
	if len(id) != idLen {
		return false
	}
	for _, r := range id {
		if !strings.ContainsRune(idAlphabet, r) {
			return false
		}
	}
	return true
}

func validDigest(d string) bool {
	hexPart, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hexPart) != 64 {
		return false
	}
	return strings.Trim(hexPart, "0123456789abcdef") == ""
}
