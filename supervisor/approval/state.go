package approval

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"
)

// A requestState comes back from the host, so it is attacker-controlled:
// mcpsandbox's carries an HMAC over what it binds (the session, the method,
// the tool, the arguments' digest, an expiry and a nonce), and is taken at
// most once. One that does not begin with statePrefix is not mcpsandbox's
// (the server may have its own) and is left alone.
const statePrefix = "mcpsandbox.approval.v1."

// processKey signs the requestStates of every session of this process; a
// new process forgets them, as it forgets its sessions.
var processKey = sync.OnceValue(func() []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
})

// ticket is what a requestState binds.
type ticket struct {
	Session string `json:"s"`
	Method  string `json:"m"`
	Tool    string `json:"t"`
	Digest  string `json:"d"`
	Asked   int64  `json:"a"` // unix ms: when the question was asked
	Expires int64  `json:"e"` // unix ms
	Nonce   string `json:"n"`
}

func (r *Rule) sign(t ticket) string {
	payload, _ := json.Marshal(t)
	mac := hmac.New(sha256.New, r.key)
	mac.Write(payload)
	enc := base64.RawURLEncoding
	return statePrefix + enc.EncodeToString(payload) + "." + enc.EncodeToString(mac.Sum(nil))
}

var (
	errForged  = errors.New("its signature does not verify")
	errExpired = errors.New("it expired")
	errUsed    = errors.New("it was used before")
	errBound   = errors.New("it was asked for another session, tool or arguments")
)

// verify checks a requestState of mcpsandbox's against the retry that
// carries it and takes it (single use). Callers hold r.mu.
func (r *Rule) verify(state, tool, digest string, now time.Time) (ticket, error) {
	var t ticket
	body, _ := strings.CutPrefix(state, statePrefix)
	p, m, ok := strings.Cut(body, ".")
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	sum, err2 := enc.DecodeString(m)
	if !ok || err1 != nil || err2 != nil {
		return t, errForged
	}
	mac := hmac.New(sha256.New, r.key)
	mac.Write(payload)
	if !hmac.Equal(sum, mac.Sum(nil)) || json.Unmarshal(payload, &t) != nil {
		return t, errForged
	}
	switch {
	case t.Session != r.session || t.Method != "tools/call" || t.Tool != tool || t.Digest != digest:
		return t, errBound
	case now.UnixMilli() >= t.Expires:
		return t, errExpired
	}
	r.forgetUsed(now)
	if _, used := r.used[t.Nonce]; used {
		return t, errUsed
	}
	r.used[t.Nonce] = t.Expires
	return t, nil
}

// forgetUsed drops nonces past their expiry: their states fail as expired
// anyway, so the set holds only the states signed within one timeout.
func (r *Rule) forgetUsed(now time.Time) {
	for n, exp := range r.used {
		if now.UnixMilli() >= exp {
			delete(r.used, n)
		}
	}
}

func nonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
