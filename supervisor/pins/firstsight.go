package pins

import (
	"encoding/json"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// capabilityOf is the capability a server declares for a kind of list.
var capabilityOf = map[contract.Kind]string{contract.Tool: "tools", contract.Prompt: "prompts",
	contract.Resource: "resources", contract.ResourceTemplate: "resources"}

// pinnedOf counts the pinned items of a kind of list.
func pinnedOf(c lock.Contract, kind contract.Kind) int {
	switch kind {
	case contract.Tool:
		return len(c.Tools)
	case contract.Prompt:
		return len(c.Prompts)
	case contract.Resource:
		return len(c.Resources)
	case contract.ResourceTemplate:
		return len(c.ResourceTemplates)
	}
	return 0
}

// firstSight is what pin mode tofu pins as it is listed: everything of a
// server the lock does not pin; of one it pins, a list the pinned
// capabilities declare and of which nothing is pinned (no session has
// listed it yet). An item of a list the pinned capabilities do not
// declare is new, and held.
func (r *Rule) firstSight() map[contract.Kind]bool {
	if r.o.Mode != policy.PinTOFU {
		return nil
	}
	first := map[contract.Kind]bool{}
	if !r.pinned() {
		for _, k := range allKinds {
			first[k] = true
		}
		return first
	}
	var declared map[string]json.RawMessage
	if caps, ok := r.approved.Get(contract.Capabilities, ""); ok {
		json.Unmarshal(caps.Text, &declared)
	}
	for kind, capability := range capabilityOf {
		if _, ok := declared[capability]; ok && pinnedOf(r.approved, kind) == 0 {
			first[kind] = true
		}
	}
	return first
}
