package supervisor_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// A host that closes its input with requests in flight and still reads
// (`printf ... | mcpsandbox run`, or `connect` passing on a host's EOF)
// gets every one answered: the server's answer within --grace, else
// mcpsandbox's, never nothing.
func TestHostClosingItsInputStillGetsEveryAnswer(t *testing.T) {
	pol := testPolicy(exampleCommand(t))
	pol.Grace = 2 * time.Second
	r := startRelay(t, pol)
	h := r.rawHost()
	h.initialize("2025-11-25")
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":200}}}`)
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"last"}}}`)
	h.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`)
	r.toRelay.Close() // EOF on the relay's input; the host still reads

	if res := h.response(`2`); res["result"] == nil {
		t.Errorf("the call in flight at the host's EOF: %s, want the server's result", res)
	}
	if res := h.response(`3`); !strings.Contains(string(res["result"]), "last") {
		t.Errorf("the last call before the host's EOF: %s, want the server's result", res)
	}
	if res := h.response(`4`); errorCode(res) != supervisor.CodeServerStopped {
		t.Errorf("a call the server did not answer within --grace: %s, want mcpsandbox's %d", res, supervisor.CodeServerStopped)
	}
	r.wait()
	h.checkOneAnswerEach()
}
