package supervisor

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

var releasePending atomic.Bool

// releaseMemorySoon hands the memory of dropped big buffers back to the OS
// shortly after (Go's background scavenger would take minutes), at most
// once per burst of big messages.
func releaseMemorySoon() {
	if releasePending.CompareAndSwap(false, true) {
		time.AfterFunc(200*time.Millisecond, func() {
			releasePending.Store(false)
			debug.FreeOSMemory()
		})
	}
}
