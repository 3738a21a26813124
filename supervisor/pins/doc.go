// Package pins holds a server to the contract its lock pins: what it
// tells the model (tools, prompts, resources, templates, instructions,
// serverInfo, capabilities) is compared, at its initialize result and at
// each list page, with the lock's approved contract of that server.
//
// At first sight (no approved contract yet), pin mode tofu pins what the
// session lists and writes it to the lock; strict shows the host nothing
// and refuses every call, recording what it saw as pending; off only logs.
// Once pinned, an item that is new or changed is left out of its list and
// recorded as pending in the lock, where `mcpsandbox pins diff` shows it
// and `pins approve` approves it; a call of it is refused (mcprules.Held).
// Changed instructions are replaced by the approved text, and annotations
// only ever raise risk (contract.Compare): a flip toward safety is shown
// as the pinned annotations.
//
// The policy's tool overrides (contract/override) are applied to each
// tools/list page before it is compared, so the lock pins and the host
// sees the tools as overridden. What is pinned or held is scanned
// (contract/scan) with the server's egress allowlist and, for a daemon,
// the tools the lock pins of its other servers; a high finding holds an
// item that would be pinned at first sight, or is new, as "finding".
//
// It is a room of its own, an mcprules.Rules the supervisor chains inside
// the policy's rules (mcprules.Chain), so that the relay holds no pin and
// the policy's rules stay pure: this is the one rule that reads and writes
// a file. It does so only at an initialize result, at a list page and at a
// call of an item it holds, never at a call of a pinned, unchanged item.
package pins
