package lock

import "github.com/mcpsandbox/mcpsandbox/contract"

// Why an item waits in Pending; the relay's error names it as data.reason.
const (
	ReasonNew      = "new"      // not pinned before
	ReasonChanged  = "changed"  // differs from the approved text
	ReasonFinding  = "finding"  // the scanner found something of high severity
	ReasonUnpinned = "unpinned" // pin mode strict: nothing is pinned for this server
)

// Approve moves one pending item into the approved contract (without its
// Reason, Findings and Seen), and reports whether there was one.
func (s *Server) Approve(kind contract.Kind, key string) bool {
	it, ok := s.Pending.Get(kind, key)
	if !ok {
		return false
	}
	s.Contract.Put(it, Entry{})
	s.Pending.Delete(kind, key)
	return true
}

// ApproveAll approves every pending item, and says which it approved.
func (s *Server) ApproveAll() []contract.Item {
	items := s.Pending.Items()
	for _, it := range items {
		s.Approve(it.Kind, it.Key)
	}
	return items
}
