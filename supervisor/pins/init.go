package pins

import (
	"encoding/json"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// initialized compares the server-wide items of an initialize (or
// server/discover) result:
// instructions that are new or changed (or any, of a server strict does
// not let in) are replaced by the approved text, or left out when none is
// approved. A changed serverInfo or capabilities is recorded as pending
// and passed on: lists and calls are what is held.
func (r *Rule) initialized(method string, result []byte) ([]byte, *mcprules.Refusal) {
	r.reloadIfChanged()
	items, err := contract.FromInitialize(result)
	if err != nil {
		return nil, unreadable(method, err)
	}
	page := make(map[string]seen, len(items))
	for _, it := range items {
		page[string(it.Kind)] = r.judge(it)
	}
	if r.o.Mode == policy.PinOff {
		r.logOff(page)
		return nil, nil
	}
	r.scanPage(page)
	r.record(page)
	for _, k := range []contract.Kind{contract.Instructions, contract.ServerInfo, contract.Capabilities} {
		delete(r.pinning, k)
	}
	in, ok := page[string(contract.Instructions)]
	if !ok || in.reason == "" {
		return nil, nil
	}
	res := map[string]json.RawMessage{}
	if json.Unmarshal(result, &res) != nil {
		return nil, unreadable(method, errNotObject)
	}
	if approved, ok := r.approved.Get(contract.Instructions, ""); ok {
		res["instructions"] = approved.Text
	} else {
		delete(res, "instructions")
	}
	out, err := mcprules.EncodeObject(res)
	if err != nil {
		return nil, unreadable(method, err)
	}
	return out, nil
}

type notObject struct{}

func (notObject) Error() string { return "the result is not an object" }

var errNotObject error = notObject{}
