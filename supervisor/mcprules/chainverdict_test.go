package mcprules

import (
	"context"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// verdictRule answers every request with its verdict.
type verdictRule struct{ v Verdict }

func (r verdictRule) HostRequest([]byte, *jsonrpc.Envelope) (Verdict, Call) { return r.v, nil }
func (r verdictRule) ServerNotification([]byte, *jsonrpc.Envelope) bool     { return true }

// decideWith is a Pending that records its turn and decides d.
type decideWith struct {
	d     Decision
	order *[]string
	name  string
}

func (p decideWith) Decide(context.Context, Host) Decision {
	*p.order = append(*p.order, p.name)
	return p.d
}

// An inner rule's Answer, Pending and Approval reach the relay through
// the chain; two Pendings decide in turn, outer first, and the inner one
// only when the outer relays.
func TestChainPassesAnswersAndPendings(t *testing.T) {
	const msg = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file"}}`
	ap := &Approval{Channel: "session", Decision: "allow-session"}
	v, _ := request(t, Chain(verdictRule{}, verdictRule{Verdict{Answer: []byte(`{}`), Approval: ap}}), msg)
	if string(v.Answer) != `{}` || v.Approval != ap {
		t.Errorf("inner answer: %+v, want its Answer and Approval", v)
	}
	var order []string
	outer := decideWith{d: Decision{Params: []byte(`{"name":"a"}`)}, order: &order, name: "outer"}
	inner := decideWith{d: Decision{Approval: ap}, order: &order, name: "inner"}
	v, _ = request(t, Chain(verdictRule{Verdict{Pending: outer}}, verdictRule{Verdict{Pending: inner}}), msg)
	if v.Pending == nil {
		t.Fatal("two pendings: none reached the relay")
	}
	d := v.Pending.Decide(context.Background(), nil)
	if len(order) != 2 || order[0] != "outer" || string(d.Params) != `{"name":"a"}` || d.Approval != ap {
		t.Errorf("decided %v, %+v: want outer then inner, the outer's params, the inner's approval", order, d)
	}
	order = nil
	outer.d = Decision{Refusal: &Refusal{Kind: ApprovalDenied}}
	v, _ = request(t, Chain(verdictRule{Verdict{Pending: outer}}, verdictRule{Verdict{Pending: inner}}), msg)
	if d := v.Pending.Decide(context.Background(), nil); d.Refusal == nil || len(order) != 1 {
		t.Errorf("outer refused: %+v after %v, want its refusal and no inner Decide", d, order)
	}
}
