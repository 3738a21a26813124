package mcprules

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// hideRule is an inner rule of the test's: it refuses a tools/call of
// hidden and leaves it out of tools/list, recording the names it saw.
type hideRule struct {
	hidden string
	saw    []string
	ended  int
}

func (h *hideRule) HostRequest(msg []byte, e *jsonrpc.Envelope) (Verdict, Call) {
	switch e.MethodString() {
	case "tools/call":
		var p struct{ Name string }
		json.Unmarshal(e.Params, &p)
		h.saw = append(h.saw, p.Name)
		if p.Name == h.hidden {
			return Verdict{Refusal: &Refusal{Kind: Denied, Message: "held"}}, nil
		}
		return Verdict{}, h
	case "tools/list":
		return Verdict{}, h
	}
	return Verdict{}, nil
}

func (h *hideRule) ServerNotification([]byte, *jsonrpc.Envelope) bool { return true }
func (h *hideRule) Timeout() time.Duration                            { return time.Second }
func (h *hideRule) End()                                              { h.ended++ }

func (h *hideRule) Result(result []byte) ([]byte, *Refusal) {
	lr := &listRule{method: "tools/list", list: "tools", key: "name", hidden: func(n string) bool {
		h.saw = append(h.saw, n)
		return n == h.hidden
	}}
	var s set
	return s.filter(result, lr)
}

func request(t *testing.T, ru Rules, msg string) (Verdict, Call) {
	t.Helper()
	var sc jsonrpc.Scanner
	var b jsonrpc.Batch
	if err := sc.Scan([]byte(msg), &b); err != nil {
		t.Fatal(err)
	}
	return ru.HostRequest([]byte(msg), &b.Msgs[0])
}

// The policy's rules nest around another's: the inner rule sees the
// server's own names (the prefix taken off), its list filtering comes
// first and the policy then prefixes what is left; its refusal ends the
// outer's call; the shorter timeout wins.
func TestChainNestsInnerRulesInsideThePolicys(t *testing.T) {
	var p policy.Policy
	p.ToolPrefix = "gh_"
	p.CallTimeout = time.Minute
	inner := &hideRule{hidden: "held"}
	ru := Chain(New(p, Options{}), inner)

	v, c := request(t, ru, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gh_echo"}}`)
	if v.Refusal != nil || c == nil || string(v.Params) != `{"name":"echo"}` {
		t.Fatalf("call of gh_echo: %+v %s, call %v", v.Refusal, v.Params, c)
	}
	if d := c.Timeout(); d != time.Second {
		t.Errorf("timeout %v, want the inner's shorter 1s", d)
	}
	c.End()
	if v, _ := request(t, ru, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gh_held"}}`); v.Refusal == nil || v.Refusal.Message != "held" {
		t.Fatalf("call of gh_held not refused by the inner rule: %+v", v)
	}
	if !slices.Equal(inner.saw, []string{"echo", "held"}) {
		t.Errorf("inner rule saw %q, want the server's own names", inner.saw)
	}

	inner.saw = nil
	_, c = request(t, ru, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	res, ref := c.Result([]byte(`{"tools":[{"name":"echo"},{"name":"held"}]}`))
	if ref != nil || string(res) != `{"tools":[{"name":"gh_echo"}]}` {
		t.Fatalf("list: %s %+v", res, ref)
	}
	if !slices.Equal(inner.saw, []string{"echo", "held"}) {
		t.Errorf("inner rule filtered %q, want the server's own names", inner.saw)
	}
	c.End()
	if inner.ended != 2 {
		t.Errorf("inner calls ended %d times, want 2", inner.ended)
	}
	if Chain(nil, inner) != Rules(inner) || Chain(inner, nil) != Rules(inner) {
		t.Error("Chain with a nil side is not the other side")
	}
}
