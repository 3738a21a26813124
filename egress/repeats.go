package egress

import "sync"

// maxRepeatKeys bounds the destinations whose repeats are counted apart.
const maxRepeatKeys = 1024

// repeats bounds the log lines of an event a hostile server can repeat at
// will (a denied connection, a denied name): the first of each key is
// logged, then the 10th, 100th, 1000th... with the count. Past
// maxRepeatKeys distinct keys, every new key shares one count.
type repeats struct {
	mu       sync.Mutex
	seen     map[string]uint64
	overflow uint64
}

// note counts one event of key and reports how many there have been and
// whether this one is to be logged; shared is true when key is counted
// with the overflow.
func (r *repeats) note(key string) (n uint64, log, shared bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = make(map[string]uint64)
	}
	c, ok := r.seen[key]
	if !ok && len(r.seen) >= maxRepeatKeys {
		r.overflow++
		return r.overflow, logCount(r.overflow), true
	}
	c++
	r.seen[key] = c
	return c, logCount(c), false
}

// logCount: 1, 10, 100, ...
func logCount(n uint64) bool {
	for n >= 10 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}
