package cgroups

import (
	"errors"
	"sync"
)

// live holds the Groups of this process that are not deleted yet, so that
// a process about to exit without its usual shutdown (a second SIGTERM)
// can still kill their processes and remove them (DeleteAll).
var live liveGroups

type liveGroups struct {
	mu     sync.Mutex
	groups map[*Group]struct{}
	closed bool           // DeleteAll ran: no new Group
	making sync.WaitGroup // Groups being created, which DeleteAll awaits
}

var errExiting = errors.New("cgroups: no new cgroup: mcpsandbox is exiting and has removed its cgroups")

// begin admits the creation of a Group; the caller calls making.Done.
func (l *liveGroups) begin() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errExiting
	}
	l.making.Add(1)
	return nil
}

func (l *liveGroups) add(c *Group) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errExiting
	}
	if l.groups == nil {
		l.groups = map[*Group]struct{}{}
	}
	l.groups[c] = struct{}{}
	return nil
}

func (l *liveGroups) remove(c *Group) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.groups, c)
}

// DeleteAll deletes every cgroup this process made and has not deleted,
// killing the processes inside, and refuses new ones from then on: for a
// process about to exit at once. The sandbox's init dies with them, and with
// it every process of its pid namespace.
func DeleteAll() error {
	live.mu.Lock()
	live.closed = true
	groups := make([]*Group, 0, len(live.groups))
	for c := range live.groups {
		groups = append(groups, c)
	}
	live.mu.Unlock()
	live.making.Wait() // each fails at add, and deletes itself
	var errs []error
	for _, c := range groups {
		errs = append(errs, c.Delete())
	}
	return errors.Join(errs...)
}
