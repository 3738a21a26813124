package supervisor

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

// MemoryReleaser returns a function for Options.ReleaseMemory that hands
// the memory of dropped big buffers back to the OS (debug.FreeOSMemory, a
// whole-process collection) shortly after, since Go's background scavenger
// would take minutes: at most once per delay, however many relays call it.
// The process owns it: make one and give it to each of its relays.
func MemoryReleaser(delay time.Duration) func() {
	var pending atomic.Bool
	return func() {
		if pending.CompareAndSwap(false, true) {
			time.AfterFunc(delay, func() {
				pending.Store(false)
				debug.FreeOSMemory()
			})
		}
	}
}
