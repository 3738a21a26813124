package contract

import (
	"slices"
	"strings"
)

// Op is what happened to one item between the pinned contract and the one seen.
type Op uint8

const (
	Same Op = iota
	Added
	Removed
	Changed
)

func (op Op) String() string {
	switch op {
	case Added:
		return "added"
	case Removed:
		return "removed"
	case Changed:
		return "changed"
	}
	return "same"
}

// Change is one item's difference between a pinned contract and a seen one.
type Change struct {
	Kind    Kind
	Key     string
	Op      Op
	Details []string // semantic, one line each
	Old     *Item    // the pinned item; nil when Added
	New     *Item    // the seen item; nil when Removed
}

// Name is how users name the changed item (see ItemName).
func (c Change) Name() string { return ItemName(c.Kind, c.Key) }

// Compare compares a pinned item with the item seen under the same name. An
// Item with an empty Hash stands for "none": a pinned one makes the change
// Added, a seen one Removed. Equal hashes are Same. Otherwise the Details
// say, one line each, what changed; a change of annotations only toward
// safety is Same (its Details say it was ignored), since annotations are
// untrusted and may only ever raise risk.
func Compare(pinned, seen Item) Change {
	c := Change{Kind: seen.Kind, Key: seen.Key}
	if seen.Hash == "" {
		c.Kind, c.Key = pinned.Kind, pinned.Key
	}
	switch {
	case pinned.Hash == "" && seen.Hash == "":
		return c
	case pinned.Hash == "":
		c.Op, c.New = Added, &seen
		c.Details = brings(seen)
		return c
	case seen.Hash == "":
		c.Op, c.Old = Removed, &pinned
		return c
	}
	c.Old, c.New = &pinned, &seen
	if pinned.Hash == seen.Hash {
		return c
	}
	counted, ignored := details(pinned, seen)
	c.Details = append(counted, ignored...)
	if len(counted) > 0 {
		c.Op = Changed
	}
	return c
}

// Diff compares two sets of items: those added, removed and changed, sorted
// by kind then key. Items that are the Same are left out.
func Diff(pinned, seen []Item) []Change {
	type id struct {
		kind Kind
		key  string
	}
	old := make(map[id]Item, len(pinned))
	for _, it := range pinned {
		old[id{it.Kind, it.Key}] = it
	}
	var changes []Change
	for _, it := range seen {
		k := id{it.Kind, it.Key}
		c := Compare(old[k], it)
		delete(old, k)
		if c.Op != Same {
			changes = append(changes, c)
		}
	}
	for _, it := range old {
		changes = append(changes, Compare(it, Item{}))
	}
	slices.SortFunc(changes, func(a, b Change) int { return Order(a.Kind, a.Key, b.Kind, b.Key) })
	return changes
}

// brings lists what an added item brings that a user approves: a tool's
// parameters, a prompt's arguments.
func brings(it Item) []string {
	obj := object(it.Text)
	switch it.Kind {
	case Tool:
		if props := asObject(asObject(obj["inputSchema"])["properties"]); len(props) > 0 {
			lines := schemaDetails("parameter", "input schema", nil, obj["inputSchema"])
			return slices.DeleteFunc(lines, func(l string) bool { return !strings.HasPrefix(l, "parameter ") })
		}
	case Prompt:
		if args, _ := obj["arguments"].([]any); len(args) > 0 {
			return argumentDetails(nil, obj["arguments"])
		}
	}
	return nil
}
