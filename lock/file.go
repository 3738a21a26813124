package lock

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/mcpsandbox/mcpsandbox/contract"
)

// Version is the lock format this package reads and writes.
const Version = 1

// File is a whole lock: {"version":1,"servers":{ID:{…}}}. A server's ID is
// launch's state name (npm+@playwright+mcp).
type File struct {
	Version   int
	Servers   map[string]*Server
	Approvals map[string]*Approval // by id: calls held on the deferred path (approvals.go)
}

// Server is what the lock records of one server.
type Server struct {
	Name     string   // display name
	Package  *Package // nil for a server that is no npm package
	Contract Contract // approved
	Pending  Contract // seen but held until approved (new, changed, or with a high-severity finding)
	Mode     string   // "" or the pin mode that pinned it (informational)
}

// Package is where a server's code came from.
type Package struct {
	Name, Version, Integrity, Registry string
	Published                          time.Time
	Provenance                         *Provenance
	MCPName                            string
	InstallHosts                       []string
}

// Provenance is the build identity a registry's attestation names.
type Provenance struct {
	Issuer, Repository, Workflow, Commit string
}

// Entry is one pinned item. Reason, Findings and Seen are set in Pending only.
type Entry struct {
	Hash     string
	Text     json.RawMessage
	Reason   string
	Findings []string
	Seen     time.Time
}

// Contract is a server's contract as pinned, keyed as the items are.
type Contract struct {
	Tools, Prompts, Resources, ResourceTemplates map[string]Entry
	Instructions, ServerInfo, Capabilities       *Entry
}

// New is an empty lock.
func New() *File { return &File{Version: Version, Servers: map[string]*Server{}} }

// keyed is the map of kind's entries, made when make is true.
func (c *Contract) keyed(kind contract.Kind, make_ bool) *map[string]Entry {
	var m *map[string]Entry
	switch kind {
	case contract.Tool:
		m = &c.Tools
	case contract.Prompt:
		m = &c.Prompts
	case contract.Resource:
		m = &c.Resources
	case contract.ResourceTemplate:
		m = &c.ResourceTemplates
	default:
		return nil
	}
	if make_ && *m == nil {
		*m = map[string]Entry{}
	}
	return m
}

// single is the slot of a server-wide kind.
func (c *Contract) single(kind contract.Kind) **Entry {
	switch kind {
	case contract.Instructions:
		return &c.Instructions
	case contract.ServerInfo:
		return &c.ServerInfo
	case contract.Capabilities:
		return &c.Capabilities
	}
	return nil
}

// Entry is the entry of one item, with its Reason, Findings and Seen.
func (c *Contract) Entry(kind contract.Kind, key string) (Entry, bool) {
	if m := c.keyed(kind, false); m != nil {
		e, ok := (*m)[key]
		return e, ok
	}
	if p := c.single(kind); p != nil && *p != nil && key == "" {
		return **p, true
	}
	return Entry{}, false
}

// Get is one pinned item.
func (c *Contract) Get(kind contract.Kind, key string) (contract.Item, bool) {
	e, ok := c.Entry(kind, key)
	if !ok {
		return contract.Item{}, false
	}
	return contract.Item{Kind: kind, Key: key, Text: e.Text, Hash: e.Hash}, true
}

// Put pins it; e supplies Reason, Findings and Seen (its Hash and Text are
// the item's).
func (c *Contract) Put(it contract.Item, e Entry) {
	e.Hash, e.Text = it.Hash, it.Text
	if m := c.keyed(it.Kind, true); m != nil {
		(*m)[it.Key] = e
		return
	}
	if p := c.single(it.Kind); p != nil {
		*p = &e
	}
}

// Delete unpins one item.
func (c *Contract) Delete(kind contract.Kind, key string) {
	if m := c.keyed(kind, false); m != nil {
		delete(*m, key)
		if len(*m) == 0 {
			*m = nil
		}
		return
	}
	if p := c.single(kind); p != nil {
		*p = nil
	}
}

// Items is every pinned item, sorted by kind then key.
func (c *Contract) Items() []contract.Item {
	var items []contract.Item
	for _, kind := range contract.Kinds {
		if m := c.keyed(kind, false); m != nil {
			for key := range *m {
				it, _ := c.Get(kind, key)
				items = append(items, it)
			}
		} else if it, ok := c.Get(kind, ""); ok {
			items = append(items, it)
		}
	}
	contract.SortItems(items)
	return items
}

// Empty reports whether nothing is pinned.
func (c *Contract) Empty() bool {
	return len(c.Tools)+len(c.Prompts)+len(c.Resources)+len(c.ResourceTemplates) == 0 &&
		c.Instructions == nil && c.ServerInfo == nil && c.Capabilities == nil
}

// IDs is every server's ID, sorted.
func (f *File) IDs() []string {
	ids := make([]string, 0, len(f.Servers))
	for id := range f.Servers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Server finds a server by its ID, else by its display name. A display name
// that two servers share finds neither: the caller must name the ID.
func (f *File) Server(nameOrID string) (id string, s *Server, ok bool) {
	if s, ok := f.Servers[nameOrID]; ok {
		return nameOrID, s, true
	}
	for _, cand := range f.IDs() {
		if f.Servers[cand].Name != nameOrID {
			continue
		}
		if ok {
			return "", nil, false
		}
		id, s, ok = cand, f.Servers[cand], true
	}
	return id, s, ok
}
