package main

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/lock"
)

// entry is one item of a lock's contract with what the lock says of it.
type entry struct {
	contract.Item
	lock.Entry
}

// removed is the Reason of a held removal: the server no longer lists an
// approved item, whose approved text the pending entry keeps.
const removed = "removed"

// entries walks a contract's items in the order diffs show them.
func entries(c *lock.Contract) []entry {
	var out []entry
	keyed := map[contract.Kind]map[string]lock.Entry{
		contract.Tool: c.Tools, contract.Prompt: c.Prompts,
		contract.Resource: c.Resources, contract.ResourceTemplate: c.ResourceTemplates,
	}
	single := map[contract.Kind]*lock.Entry{
		contract.Instructions: c.Instructions, contract.ServerInfo: c.ServerInfo, contract.Capabilities: c.Capabilities,
	}
	for _, kind := range contract.Kinds {
		for key, e := range keyed[kind] {
			out = append(out, entry{contract.Item{Kind: kind, Key: key, Text: e.Text, Hash: e.Hash}, e})
		}
		if e := single[kind]; e != nil {
			out = append(out, entry{contract.Item{Kind: kind, Text: e.Text, Hash: e.Hash}, *e})
		}
	}
	slices.SortFunc(out, func(a, b entry) int {
		if contract.Less(a.Kind, a.Key, b.Kind, b.Key) {
			return -1
		}
		return 1
	})
	return out
}

// why is a held entry's reason as list and approve print it.
func why(e entry) string {
	reason := e.Reason
	if reason == "" {
		reason = "held"
	}
	return e.Name() + " (" + reason + ")"
}

// heldNames lists a server's held items with their reasons.
func heldNames(s *lock.Server) []string {
	var names []string
	for _, e := range entries(&s.Pending) {
		names = append(names, why(e))
	}
	return names
}

// pick selects the held entries named, or every one when none is; a name
// not held is an error naming what is.
func pick(id string, s *lock.Server, names []string) ([]entry, error) {
	held := entries(&s.Pending)
	if len(names) == 0 {
		return held, nil
	}
	var out []entry
	for _, name := range names {
		kind, key, err := contract.ParseItemName(name)
		if err != nil {
			return nil, badArgument(err.Error())
		}
		i := slices.IndexFunc(held, func(e entry) bool { return e.Kind == kind && e.Key == key })
		if i < 0 {
			return nil, notHeld(id, s, contract.ItemName(kind, key))
		}
		out = append(out, held[i])
	}
	return out, nil
}

func notHeld(id string, s *lock.Server, name string) error {
	held := heldNames(s)
	if len(held) == 0 {
		return fmt.Errorf("%s of %s is not held: nothing of %s is (its contract is as approved)", name, displayName(id, s), displayName(id, s))
	}
	return fmt.Errorf("%s of %s is not held; what is: %s", name, displayName(id, s), strings.Join(held, ", "))
}

// displayName is how logs name a server, with its id when that differs.
func displayName(id string, s *lock.Server) string {
	if s.Name == "" || s.Name == id {
		return id
	}
	return s.Name
}

// argName is how a command line names a server: its display name when
// that finds it alone, else its id.
func argName(f *lock.File, id string) string {
	name := displayName(id, f.Servers[id])
	if found, _, ok := f.Server(name); ok && found == id {
		return name
	}
	return id
}

// badArgument is a NAME the lock does not hold or an ITEM that names no
// item: the command line's error.
type badArgument string

func (u badArgument) Error() string { return string(u) }

// findServer finds NAME by id or display name, or says which names are close.
func findServer(f *lock.File, file, name string) (string, *lock.Server, error) {
	if id, s, ok := f.Server(name); ok {
		return id, s, nil
	}
	if len(f.Servers) == 0 {
		return "", nil, badArgument(fmt.Sprintf("no server %q: %s pins no server yet", name, file))
	}
	var all, near, same []string
	lower := strings.ToLower(name)
	like := func(n string) bool {
		ln := strings.ToLower(n)
		return n != "" && (strings.Contains(ln, lower) || strings.Contains(lower, ln) || field.EditDistance(lower, ln) <= max(2, len(name)/3))
	}
	for _, id := range f.IDs() {
		s := f.Servers[id]
		all = append(all, displayName(id, s))
		if s.Name == name {
			same = append(same, id)
		}
		if like(id) || like(s.Name) || like(path.Base(s.Name)) { // server-memroy is close to @modelcontextprotocol/server-memory
			near = append(near, displayName(id, s))
		}
	}
	if len(same) > 1 {
		return "", nil, badArgument(fmt.Sprintf("%d servers of %s are named %q: give the id of one: %s", len(same), file, name, strings.Join(same, ", ")))
	}
	if len(near) > 0 {
		return "", nil, badArgument(fmt.Sprintf("no server %q in %s; did you mean %s?", name, file, strings.Join(near, " or ")))
	}
	return "", nil, badArgument(fmt.Sprintf("no server %q in %s; it pins %s", name, file, strings.Join(all, ", ")))
}

// open loads the lock and finds the servers asked for; ok is false when
// it reported why not.
func (p pinsRun) open(sub string) (*lock.File, []string, int, bool) {
	f, err := lock.Load(p.path)
	if err == nil {
		var ids []string
		if ids, err = p.servers(f); err == nil {
			return f, ids, exitOK, true
		}
	}
	return nil, nil, p.fail(sub, err), false
}

// servers are the lock's servers, or NAME's alone, sorted by id.
func (p pinsRun) servers(f *lock.File) ([]string, error) {
	if p.name != "" {
		id, _, err := findServer(f, p.path, p.name)
		return []string{id}, err
	}
	ids := make([]string, 0, len(f.Servers))
	for id := range f.Servers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}
