package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// mcpsandbox's own requests to the host (mcprules.Host: a rule asking a
// person through elicitation/create). They go out under ids
// "mcpsandbox:ask:N", in the relay's namespace, which no server request
// ever gets on its way to the host (those are "mcpsandbox:gN:M") and
// which the server side never looks up: the host's answer is taken in
// hostResponseLocked and cannot reach the server, and a server cannot
// answer one.

// maxAsks bounds mcpsandbox's own requests awaiting the host's answer: a
// person answers them one at a time, and a flood of held calls must not
// grow the relay without bound. Over it, Request fails at once
// (mcprules.ErrTooManyAsks).
const maxAsks = 64

// askPrefix starts the ids of mcpsandbox's own requests to the host.
const askPrefix = relayPrefix + "ask:"

// hostAnswer is the host's answer to one of mcpsandbox's requests.
type hostAnswer struct {
	result []byte
	err    error
}

// hostAsker is the relay's mcprules.Host.
type hostAsker struct{ r *relay }

func (h hostAsker) Request(ctx context.Context, method string, params []byte) ([]byte, error) {
	r := h.r
	if !json.Valid(params) {
		return nil, errors.New("mcpsandbox: the params of its own " + method + " are not JSON")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ch := make(chan hostAnswer, 1)
	r.mu.Lock()
	select {
	case <-r.hostGone:
		r.mu.Unlock()
		return nil, mcprules.ErrHostGone
	default:
	}
	if len(r.asks) >= maxAsks {
		r.mu.Unlock()
		r.log.Warn("mcpsandbox's own request to the host not sent: too many await an answer", "method", method, "limit", maxAsks)
		return nil, mcprules.ErrTooManyAsks
	}
	r.seq++
	id := string(quoteID(askPrefix + strconv.FormatUint(r.seq, 10)))
	r.asks[id] = ch
	r.toHost = append(r.toHost, jsonrpc.NewRequest([]byte(id), method, params))
	r.unlock()
	select {
	case a := <-ch:
		return a.result, a.err
	case <-ctx.Done():
		r.forgetAsk(id, true)
		return nil, ctx.Err()
	case <-r.hostGone:
		r.forgetAsk(id, false)
		return nil, mcprules.ErrHostGone
	}
}

// forgetAsk gives up waiting for the answer to ask id; cancel tells the
// host (notifications/cancelled), unless it answered in the meantime.
func (r *relay) forgetAsk(id string, cancel bool) {
	r.mu.Lock()
	if _, ok := r.asks[id]; ok {
		delete(r.asks, id)
		if cancel {
			r.toHost = append(r.toHost, jsonrpc.NewNotification("notifications/cancelled", map[string]any{
				"requestId": json.RawMessage(id), "reason": "mcpsandbox: the request it asked about ended",
			}))
		}
	}
	r.unlock()
}

// askAnsweredLocked takes the host's answer (e) to one of mcpsandbox's own
// requests, under its id key; false when key is none of them. r.mu is held.
func (r *relay) askAnsweredLocked(key string, msg []byte, e *jsonrpc.Envelope) bool {
	ch, ok := r.asks[key]
	if !ok {
		return false
	}
	delete(r.asks, key)
	var a hostAnswer
	switch {
	case e.HasError:
		var he struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(e.ErrorValue, &he)
		a.err = &mcprules.HostError{Code: he.Code, Message: he.Message}
	default:
		a.result = bytes.Clone(e.Result)
	}
	ch <- a // buffered, and answered once: its key left the table
	return true
}
