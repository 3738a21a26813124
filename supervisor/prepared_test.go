package supervisor_test

import (
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// A server that starts from prepared packages and never gets past its
// start (an npx install from a cache a failed prepare left): the crash
// loop's final error names the command that prepares it again.
func TestCrashLoopOfStartsNamesPrepare(t *testing.T) {
	pol := testPolicy([]string{"sh", "-c", "exit 3"}) // npm, offline, says nothing
	pol.MaxRestarts = 2
	const prepare = "mcpsandbox prepare -- npx -y @scope/pkg@1.0.0"
	r := startRelay(t, pol, func(o *supervisor.Options) {
		o.Prepared = &supervisor.Prepared{Check: func() error { return nil }, Command: prepare}
	})
	h := r.rawHost()
	h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	stopped := r.waitEvent(supervisor.EventStopped)
	if !strings.Contains(stopped.Reason, "crash loop") || !strings.Contains(stopped.Reason, "`"+prepare+"`") {
		t.Errorf("stop reason %q should name the crash loop and `%s`", stopped.Reason, prepare)
	}
	if init := h.response(`0`); errorCode(init) != supervisor.CodeServerStopped || !strings.Contains(string(init["error"]), prepare) {
		t.Errorf("initialize: %s; want CodeServerStopped naming %s", init, prepare)
	}
	r.end()
	h.checkOneAnswerEach()
}
