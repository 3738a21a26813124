package initstage

import (
	"runtime"
	"sync"
)

// forkRequests run on one locked OS thread that never exits: Pdeathsig fires
// when the thread that forked ends, not the process, so a sandbox started
// from a caller's locked, short-lived thread would be killed with it.
var (
	forkRequests   = make(chan func())
	forkThreadOnce sync.Once
)

func onForkThread(f func()) {
	forkThreadOnce.Do(func() {
		go func() {
			runtime.LockOSThread() // for good: this thread lives as long as the process
			for req := range forkRequests {
				req()
			}
		}()
	})
	done := make(chan struct{})
	forkRequests <- func() { f(); close(done) }
	<-done
}
