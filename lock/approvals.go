package lock

import (
	"crypto/rand"
	"fmt"
	"slices"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/mcpsandbox/mcpsandbox/contract"
)

// Approval is one tool call held for a person on the deferred path (a host
// that cannot be asked): the relay asks for it, `mcpsandbox approve ID`
// grants it, and the call's retry with the same arguments takes it.
type Approval struct {
	Server   string     `json:"server"`             // the server's ID in the lock (launch's state name)
	Name     string     `json:"name,omitempty"`     // its display name
	Tool     string     `json:"tool"`               // the tool called
	Digest   string     `json:"digest"`             // ArgumentDigest of the call's arguments
	Summary  string     `json:"summary,omitempty"`  // the arguments, masked, for the person who decides
	Asked    time.Time  `json:"asked"`              //
	Expires  time.Time  `json:"expires"`            // after this it is gone, approved or not
	Approved *time.Time `json:"approved,omitempty"` // nil while open
}

// ApprovalState is what TakeApproval found for a call.
type ApprovalState uint8

const (
	ApprovalNone    ApprovalState = iota // nothing asked for this call
	ApprovalOpen                         // asked, not approved yet
	ApprovalGranted                      // approved: taken (removed), good for this one call
	ApprovalExpired                      // asked but expired: removed
)

func (s ApprovalState) String() string {
	return [...]string{"none", "open", "granted", "expired"}[s]
}

// idAlphabet is RFC 4648's base32 alphabet in lower case: ids are typed by
// people, so no 0/1/8/9 to mistake for letters.
const (
	idAlphabet = "abcdefghijklmnopqrstuvwxyz234567"
	idLen      = 10
)

// newApprovalID is 10 base32 characters (50 bits) from crypto/rand: an id
// nobody can guess, short enough to type.
func newApprovalID() string {
	b := make([]byte, idLen)
	rand.Read(b)
	for i := range b {
		b[i] = idAlphabet[b[i]&31] // 256 is a multiple of 32: no bias
	}
	return string(b)
}

// ArgumentDigest binds an approval to one call's arguments: "sha256:" and
// the hex of their RFC 8785 form, so that key order and spacing do not
// matter and any other value does. Absent arguments are {}.
func ArgumentDigest(arguments []byte) (string, error) {
	if len(arguments) == 0 {
		arguments = []byte("{}")
	}
	canon, err := jcs.Transform(arguments)
	if err != nil {
		return "", fmt.Errorf("lock: the arguments are not JSON: %w", err)
	}
	return contract.Hash(canon), nil // the form a contract's items hash in
}

// AskApproval records that a call waits for approval and returns its id.
// An unexpired approval asked before for the same server, tool and digest
// is reused (a host's retries ask once); expired ones are dropped.
func AskApproval(path string, a Approval, now time.Time) (id string, err error) {
	switch {
	case a.Server == "" || a.Tool == "" || !validDigest(a.Digest):
		return "", fmt.Errorf("lock: an approval needs a server, a tool and an ArgumentDigest (got %q, %q, %q)", a.Server, a.Tool, a.Digest)
	case !a.Expires.After(a.Asked) || a.Expires.Sub(a.Asked) > MaxApprovalLife:
		return "", fmt.Errorf("lock: an approval expires after it is asked and within %s (asked %s, expires %s)", MaxApprovalLife, a.Asked, a.Expires)
	}
	err = Update(path, func(f *File) error {
		f.dropExpired(now)
		if found, _ := f.findApproval(a.Server, a.Tool, a.Digest); found != "" {
			id = found
			return nil
		}
		if f.Approvals == nil {
			f.Approvals = map[string]*Approval{}
		}
		for id = newApprovalID(); f.Approvals[id] != nil; id = newApprovalID() {
		}
		a.Approved, a.Summary = nil, cutSummary(a.Summary)
		f.Approvals[id] = &a
		return nil
	})
	return id, err
}

// TakeApproval looks up the approval of a call. A granted one is removed as
// it is returned, so that one approval lets one call through; an expired
// one is removed and reported once as expired.
func TakeApproval(path, server, tool, digest string, now time.Time) (ApprovalState, *Approval, string, error) {
	state, a, id := ApprovalNone, (*Approval)(nil), ""
	err := Update(path, func(f *File) error {
		id, a = f.findApproval(server, tool, digest)
		switch {
		case a == nil:
		case !now.Before(a.Expires):
			state = ApprovalExpired
			delete(f.Approvals, id)
		case a.Approved != nil:
			state = ApprovalGranted
			delete(f.Approvals, id)
		default:
			state = ApprovalOpen
		}
		f.dropExpired(now)
		return nil
	})
	if err != nil {
		return ApprovalNone, nil, "", err
	}
	return state, a, id, nil
}

// Approve grants the approval id. An unknown id or an expired approval is an
// error that says what to do instead.
func Approve(path, id string, now time.Time) (*Approval, error) {
	var a *Approval
	err := Update(path, func(f *File) error {
		a = f.Approvals[id]
		switch {
		case a == nil:
			return fmt.Errorf("no approval %q is waiting in %s: check the id in the error the call got (mcpsandbox approve --list shows the waiting ones; name the lock with --lock FILE if the server uses another)", id, path)
		case !now.Before(a.Expires):
			return fmt.Errorf("approval %s expired at %s: call the tool again to be asked anew, then approve the new id before it expires", id, a.Expires.Format(time.RFC3339))
		case a.Approved == nil:
			at := now
			a.Approved = &at
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// OpenApprovals is every unexpired approval at now, by id, sorted by id.
func (f *File) OpenApprovals(now time.Time) []string {
	var ids []string
	for id, a := range f.Approvals {
		if now.Before(a.Expires) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// findApproval is the unexpired-or-not approval of server, tool and digest
// (AskApproval keeps at most one); ids are sorted so that a hand-made
// duplicate finds the same one each time.
func (f *File) findApproval(server, tool, digest string) (string, *Approval) {
	ids := make([]string, 0, len(f.Approvals))
	for id := range f.Approvals {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if a := f.Approvals[id]; a.Server == server && a.Tool == tool && a.Digest == digest {
			return id, a
		}
	}
	return "", nil
}

// maxSummary bounds an approval's summary: it is for a person to read, and
// the arguments of a call may be megabytes.
const maxSummary = 1000

func cutSummary(s string) string {
	if r := []rune(s); len(r) > maxSummary {
		return string(r[:maxSummary-1]) + "…"
	}
	return s
}

func (f *File) dropExpired(now time.Time) {
	for id, a := range f.Approvals {
		if !now.Before(a.Expires) {
			delete(f.Approvals, id)
		}
	}
	if len(f.Approvals) == 0 {
		f.Approvals = nil
	}
}
