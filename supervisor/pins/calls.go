package pins

import (
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// called decides a tools/call, prompts/get or resources/read: a pinned,
// unchanged item goes on with no file read; a held one is refused unless
// the lock approved it since; under strict, so is any item of a server the
// lock does not pin.
func (r *Rule) called(kind contract.Kind, params []byte, member string) (mcprules.Verdict, mcprules.Call) {
	key, ok := keyOf(params, member)
	if !ok {
		// As the policy's rules refuse a name they cannot check (-31107).
		return mcprules.Verdict{Refusal: &mcprules.Refusal{Kind: mcprules.Denied, Reason: "unreadable",
			Message: fmt.Sprintf("%s of %s names no %s mcpsandbox can check against the lock (its %s is spelt more than one way, or is no string); it was not relayed", methodOf[kind], r.o.Name, kind, member)}}, nil
	}
	if key == "" {
		return mcprules.Verdict{}, nil // names nothing: the server answers it
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.pinned() && r.o.Mode == policy.PinStrict {
		if r.reloadIfChanged(); !r.pinned() {
			return r.refuse(contract.ItemName(kind, key), lock.ReasonUnpinned, fmt.Sprintf("%s %q of %s is held for approval (the lock %s does not pin the server, and pin mode strict refuses what it does not pin)", kind, key, r.o.Name, r.o.Path))
		}
	}
	var name string
	var h hold
	isHeld := false
	if len(r.held) > 0 { // naming the item allocates: not while nothing is held
		name = contract.ItemName(kind, key)
		h, isHeld = r.held[name]
	}
	if !isHeld {
		if !r.pinned() || r.pinning[kind] || kind == contract.Resource {
			// Nothing pinned to hold it to yet, or a resource (a
			// template's URIs are never listed one by one).
			return mcprules.Verdict{}, nil
		}
		if _, ok := r.approved.Entry(kind, key); ok {
			return mcprules.Verdict{}, nil // pinned and unchanged: the hot path
		}
		name = contract.ItemName(kind, key)
		h = hold{kind: kind, key: key, reason: lock.ReasonNew}
		if e, ok := r.pending.Entry(kind, key); ok && e.Reason == lock.ReasonFinding {
			// Held at its first sight, by an earlier session: so it stays
			// until approved, listed or not.
			h.reason, h.rules = e.Reason, storedRules(e.Findings)
		}
	}
	r.reloadIfChanged()
	if it, ok := r.approved.Get(kind, key); ok && (it.Hash == h.hash || !isHeld) {
		delete(r.held, name)
		return mcprules.Verdict{}, nil
	}
	why := "new since the server was pinned"
	switch h.reason {
	case lock.ReasonChanged:
		why = "changed since it was pinned"
	case lock.ReasonFinding:
		why = "the scanner found what tool poisoning looks like in it: " + h.rules
	}
	return r.refuse(name, h.reason, fmt.Sprintf("%s %q of %s is held for approval (%s)", kind, key, r.o.Name, why))
}

// methodOf names the request that asks for an item of a kind.
var methodOf = map[contract.Kind]string{contract.Tool: "tools/call", contract.Prompt: "prompts/get", contract.Resource: "resources/read"}

func (r *Rule) refuse(item, reason, what string) (mcprules.Verdict, mcprules.Call) {
	approve := item
	if reason == lock.ReasonUnpinned {
		approve = "" // all it lists
	}
	return mcprules.Verdict{Refusal: &mcprules.Refusal{Kind: mcprules.Held, Reason: reason, Item: item,
		Message: what + ": " + r.commands(approve)}}, nil
}
