package pins

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/contract/override"
	"github.com/mcpsandbox/mcpsandbox/contract/scan"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// seen is one item as the server serves it and what becomes of it.
type seen struct {
	it     contract.Item
	reason string         // held: "new", "changed", "unpinned"; "" goes to the host
	pin    bool           // first sight under tofu: written to the approved contract
	shown  *contract.Item // the approved item the host sees instead (annotations only ever raise risk)

	findings []scan.Finding // the scanner's, of an item pinned or held
}

// listed compares one list page with the lock, the policy's tool
// overrides applied first: the lock pins, and the host sees, the tools as
// overridden. A page the server sends as it sent it before, with no
// list_changed and no new approval between, gets what the host got then,
// without a new comparison.
func (r *Rule) listed(method, cursor string, result []byte) ([]byte, *mcprules.Refusal) {
	r.reloadIfChanged()
	key := method + "\x00" + cursor
	sum := sha256.Sum256(result)
	if p, ok := r.pages[key]; ok && p.sum == sum {
		return p.out, nil
	}
	kind, _ := contract.ListKind(method)
	var overridden []byte // the page as overridden; nil: as the server sent it
	if kind == contract.Tool && len(r.o.Overrides) > 0 {
		o, err := override.Page(result, r.o.Overrides)
		if err != nil {
			return nil, unreadable(method, err)
		}
		if !bytes.Equal(o, result) {
			overridden, result = o, o
		}
	}
	items, err := contract.FromList(method, result)
	if err != nil {
		return nil, unreadable(method, err)
	}
	page := make(map[string]seen, len(items))
	for _, it := range items {
		page[it.Key] = r.judge(it)
	}
	if r.o.Mode == policy.PinOff {
		r.logOff(page)
		r.keepPage(key, sum, overridden)
		return overridden, nil
	}
	r.scanPage(page)
	r.record(page)
	if r.pinning[kind] && !hasMore(result) {
		delete(r.pinning, kind) // its first listing is whole: later ones are compared
	}
	out, ref := mcprules.EditList(method, result, mcprules.ListEdit{
		Hidden: func(k string) bool { return page[k].reason != "" },
		Edit:   func(k string, item map[string]json.RawMessage) bool { return page[k].showPinned(item) },
	})
	if ref != nil {
		return nil, ref
	}
	if out == nil {
		out = overridden
	}
	r.keepPage(key, sum, out)
	return out, nil
}

// keepPage remembers what the host got of a page, for the next list of
// it; a server paging without end does not grow the memory of them.
func (r *Rule) keepPage(key string, sum [sha256.Size]byte, out []byte) {
	if len(r.pages) >= maxPages {
		clear(r.pages)
	}
	r.pages[key] = page{sum: sum, out: out}
}

// Bounds on what one session keeps of a server's lists.
const (
	maxHeld  = 1024 // items held (and written to the lock as held)
	maxPages = 64   // pages remembered
)

// judge decides one item against the approved contract.
func (r *Rule) judge(it contract.Item) seen {
	switch {
	case !r.pinned() && r.o.Mode == policy.PinStrict:
		return seen{it: it, reason: lock.ReasonUnpinned}
	case r.pinning[it.Kind]:
		return seen{it: it, pin: true}
	}
	old, ok := r.approved.Get(it.Kind, it.Key)
	switch {
	case !ok:
		return seen{it: it, reason: lock.ReasonNew}
	case old.Hash == it.Hash:
		return seen{it: it}
	}
	if ch := contract.Compare(old, it); ch.Op != contract.Same {
		return seen{it: it, reason: lock.ReasonChanged}
	}
	return seen{it: it, shown: &old}
}

// showPinned gives a tool whose annotations flipped only toward safety
// the pinned annotations: the host sees what was approved.
func (s seen) showPinned(item map[string]json.RawMessage) bool {
	if s.shown == nil {
		return false
	}
	var pinned map[string]json.RawMessage
	if json.Unmarshal(s.shown.Text, &pinned) != nil {
		return false
	}
	if a, ok := pinned["annotations"]; ok {
		item["annotations"] = a
	} else {
		delete(item, "annotations")
	}
	return true
}

// hasMore reports whether a list page says more pages follow.
func hasMore(result []byte) bool {
	var p struct {
		NextCursor *string `json:"nextCursor"`
	}
	return json.Unmarshal(result, &p) == nil && p.NextCursor != nil && *p.NextCursor != ""
}

// record writes what a page pins or holds to the lock, once per item and
// version, and keeps the held ones for calls and status.
func (r *Rule) record(page map[string]seen) {
	var pin, pend []seen
	for _, s := range page {
		name := contract.ItemName(s.it.Kind, s.it.Key)
		switch {
		case s.pin:
			pin = append(pin, s)
		case s.reason != "":
			h, ok := r.held[name]
			if !ok && len(r.held) >= maxHeld {
				// Hidden all the same, but neither kept nor written: a
				// server cannot grow the relay or the lock without bound.
				if !r.tooMany {
					r.tooMany = true
					r.o.Log.Warn("MCP server lists more new or changed items than mcpsandbox records; the rest are hidden and not written to the lock", "limit", maxHeld, "lock", r.o.Path)
				}
				continue
			}
			if !ok || h.hash != s.it.Hash {
				pend = append(pend, s)
			}
			r.held[name] = hold{kind: s.it.Kind, key: s.it.Key, reason: s.reason, hash: s.it.Hash, rules: heldRules(s.findings)}
		default:
			delete(r.held, name)
		}
	}
	if len(pin) == 0 && len(pend) == 0 {
		return
	}
	now := r.o.Now().UTC()
	err := lock.Update(r.o.Path, func(f *lock.File) error {
		if f.Servers == nil {
			f.Servers = map[string]*lock.Server{}
		}
		s := f.Servers[r.o.ID]
		if s == nil {
			s = &lock.Server{Name: r.o.Name}
			f.Servers[r.o.ID] = s
		}
		if len(pin) > 0 && s.Mode == "" {
			s.Mode = r.o.Mode
		}
		for _, p := range pin {
			s.Contract.Put(p.it, lock.Entry{})
			s.Pending.Delete(p.it.Kind, p.it.Key)
		}
		for _, p := range pend {
			s.Pending.Put(p.it, lock.Entry{Reason: p.reason, Findings: scan.Strings(p.findings), Seen: now})
		}
		return nil
	})
	// The session holds to what it pinned, written or not.
	for _, p := range pin {
		r.approved.Put(p.it, lock.Entry{})
	}
	for _, p := range pend {
		r.pending.Put(p.it, lock.Entry{Reason: p.reason, Findings: scan.Strings(p.findings)})
	}
	if err != nil {
		r.o.Log.Error("the lock could not be written; what this session pinned and holds is kept in this session only", "lock", r.o.Path, "error", err)
	} else {
		r.stamp = stampOf(r.o.Path)
		if len(pin) > 0 {
			r.o.Log.Info("MCP server pinned at first sight (pin mode tofu)", "items", len(pin), "kind", string(pin[0].it.Kind), "lock", r.o.Path)
		}
	}
	r.logFindings(pin)
	for _, p := range pend {
		name := contract.ItemName(p.it.Kind, p.it.Key)
		attrs := []any{"item", name, "reason", p.reason, "lock", r.o.Path, "fix", r.commands(name)}
		if len(p.findings) > 0 {
			attrs = append(attrs, "findings", scan.Strings(p.findings))
		}
		r.o.Log.Warn("MCP server's "+name+" held for approval: "+heldMeans(p.it.Kind), attrs...)
	}
}

// logOff says, under pin mode off, what would be held, once per item
// and version, and holds nothing.
func (r *Rule) logOff(page map[string]seen) {
	if !r.pinned() {
		return // said once, at the start
	}
	for _, s := range page {
		name := contract.ItemName(s.it.Kind, s.it.Key)
		if s.reason == "" || r.offLogged[name] == s.it.Hash || len(r.offLogged) >= maxHeld {
			continue
		}
		r.offLogged[name] = s.it.Hash
		r.o.Log.Info("MCP server's "+name+" differs from the lock; passed on (pin mode off)", "reason", s.reason, "lock", r.o.Path)
	}
}

// heldMeans says what the host sees of a held item of kind k.
func heldMeans(k contract.Kind) string {
	switch k {
	case contract.Instructions:
		return "the host gets the approved instructions instead"
	case contract.ServerInfo, contract.Capabilities:
		return "passed on, since the host needs it to talk to the server; what it may call is decided by the lists"
	}
	return "left out of what the host sees"
}
