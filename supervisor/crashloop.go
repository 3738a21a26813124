package supervisor

import (
	"fmt"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/supervisor/diagnose"
)

// A crash loop is reported once: the first failure in full, later identical
// ones (same exit, same stderr lines) as a count, and the host's final
// error names the last error line and the count.

// holdFor bounds how long a restarted process's stderr lines are held back
// while they repeat the previous failure's: a crash loop's processes fail
// within it.
const holdFor = 3 * time.Second

// statelessSession reports whether the host's session is a 2026-07-28 one
// (no initialize).
func (r *relay) statelessSession() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sess.init == nil && r.sess.discoverParams != nil
}

// failRecord is the latest run of identical failures.
type failRecord struct {
	reason   string
	lines    []string // the stderr lines of the first of them
	lastLine string   // the line that best says what went wrong
	count    int      // 0: the latest exit was not a failure
}

// recordFailure notes how g ended and returns how many times in a row the
// server has now failed exactly this way (0 when g did not fail).
func (r *relay) recordFailure(g *generation, reason string, failed bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !failed:
		r.fail = failRecord{}
	case r.fail.count > 0 && r.fail.reason == reason && g.hold.repeated():
		r.fail.count++
	default:
		r.fail = failRecord{reason: reason, lines: g.hold.lines(), lastLine: diagnose.ErrorLine(g.stderr.lastLines(crashTail)), count: 1}
	}
	return r.fail.count
}

// repeatLines are the stderr lines a new process would repeat if it failed
// like the last one did.
func (r *relay) repeatLines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail.count == 0 {
		return nil
	}
	return r.fail.lines
}

// sameErrorLocked counts the identical failures for the crash loop's
// reason. r.mu is held.
func (r *relay) sameErrorLocked() string {
	if r.fail.count < 2 {
		return ""
	}
	return fmt.Sprintf(", the same error %d times in a row", r.fail.count)
}

// stopDetailLocked is the last stderr error, quoted for the host once the
// server is down; the log has it already. r.mu is held.
func (r *relay) stopDetailLocked() string {
	if r.stopDetail == "" {
		return ""
	}
	return "; its last error: " + r.stopDetail
}

// startFailed reports whether g ended before it served the host's session:
// it never answered and took over no session.
func (g *generation) startFailed() bool { return !g.answered.Load() && !g.ready.Load() }

// requeueLocked holds a request of a process that ended for the next one,
// under the id that process knew: the host's initialize (or
// server/discover) sent to a process that failed at start, since it never
// reached a working server and answering it "retry" would end the host's
// connect; and an open subscriptions/listen stream, which the spec has
// re-established, its duplicate acknowledgement swallowed (resent). Other
// requests are answered as crashed. r.mu is held.
func (r *relay) requeueLocked(key string, req hostRequest) bool {
	if req.method != mInitialize && req.method != mDiscover && req.method != mListen {
		return false
	}
	id := req.hostID
	if req.remapped {
		id = key
	}
	msg := jsonrpc.NewRequest([]byte(id), methodNames[req.method], req.params)
	if len(r.queue) >= maxQueued || r.queueBytes+len(msg) > int(r.pol.MaxMessage) {
		return false
	}
	r.queue = append([][]byte{msg}, r.queue...)
	r.queueBytes += len(msg)
	req.gen = 0
	req.resent = req.method == mListen
	r.inflight[key] = req
	return true
}

// ordinal writes n as 2nd, 3rd, 11th...
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprint(n) + suffix
}
