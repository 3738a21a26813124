package egress

import (
	"net/netip"
	"sync"
)

// maxNames bounds the synthetic table: a hostile server asking for endless
// names under an allowed wildcard gets SERVFAIL past it, not more memory.
const maxNames = 4096

// names maps allowed names to synthetic addresses and back. An address is
// given once and never again to another name, for the Proxy's life, so a
// client that cached an answer past its TTL still reaches the name it
// asked for.
type names struct {
	prefix netip.Prefix
	limit  int

	mu     sync.Mutex
	next   netip.Addr
	byName map[string]netip.Addr
	byAddr map[netip.Addr]string
}

func newNames(prefix netip.Prefix, limit int) *names {
	return &names{
		prefix: prefix,
		limit:  limit,
		next:   prefix.Addr().Next(), // the range's first address is its network
		byName: make(map[string]netip.Addr),
		byAddr: make(map[netip.Addr]string),
	}
}

// capacity is how many names fit: the limit, or fewer in a small range
// (its first address and, for IPv4, its last are never given).
func capacity(prefix netip.Prefix, limit int) int {
	host := prefix.Addr().BitLen() - prefix.Bits()
	if host >= 31 {
		return limit
	}
	n := 1<<host - 1
	if prefix.Addr().Is4() {
		n--
	}
	return max(0, min(limit, n))
}

// assign returns name's address, giving it the next free one if it has
// none; ok is false when the table is full.
func (n *names) assign(name string) (a netip.Addr, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a, ok := n.byName[name]; ok {
		return a, true
	}
	if len(n.byName) >= capacity(n.prefix, n.limit) {
		return netip.Addr{}, false
	}
	a = n.next
	n.next = a.Next()
	n.byName[name] = a
	n.byAddr[a] = name
	return a, true
}

// name is the name a synthetic address was given to.
func (n *names) name(a netip.Addr) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	name, ok := n.byAddr[a]
	return name, ok
}
