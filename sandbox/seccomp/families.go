package seccomp

import (
	"fmt"
	"math/bits"
	"strings"

	"golang.org/x/sys/unix"
)

// Families is the set of socket address families the built-in profile lets
// a server create with socket and socketpair; which ones a server gets is
// the sandbox's decision (its network mode), not the profile's. NETLINK_ROUTE
// is allowed in every set (getifaddrs, used by Node's os.networkInterfaces
// and glibc's AI_ADDRCONFIG); other netlink protocols never are. A
// Docker/OCI profile decides sockets itself and ignores the set.
type Families uint64

// The families the built-in profile can allow; a set with any other is
// refused (a raw or packet socket is never a server's need).
const (
	AFUnix  Families = 1 << unix.AF_UNIX
	AFInet  Families = 1 << unix.AF_INET
	AFInet6 Families = 1 << unix.AF_INET6
	// InetQueries is less than AFInet and AFInet6: their datagram sockets
	// of protocol 0 only, which is what a DNS query needs (glibc, Go,
	// c-ares all make theirs so). A network of loopback alone gives a
	// server these to ask the supervisor's resolver there; no TCP socket,
	// no ping or UDP-Lite one. It is no AF_* value: a bit past them.
	InetQueries Families = 1 << inetQueriesBit
)

// inetQueriesBit is InetQueries's bit, above every AF_* value (AF_MAX is 46).
const inetQueriesBit = 62

// allowable is every family a set may hold.
const allowable = AFUnix | AFInet | AFInet6 | InetQueries

// familyNames name the families in messages and embedded programs' files.
var familyNames = map[int]string{unix.AF_UNIX: "unix", unix.AF_INET: "inet", unix.AF_INET6: "inet6", inetQueriesBit: "inetdgram"}

// list returns the set's AF_* values, lowest first, and InetQueries's bit
// last (addDefaultProfile tells it apart).
func (f Families) list() []int {
	var afs []int
	for rest := uint64(f); rest != 0; rest &= rest - 1 {
		afs = append(afs, bits.TrailingZeros64(rest))
	}
	return afs
}

func (f Families) names() []string {
	var names []string
	for _, af := range f.list() {
		name, ok := familyNames[af]
		if !ok {
			name = fmt.Sprintf("af%d", af)
		}
		names = append(names, name)
	}
	return names
}

// String names the families, e.g. "unix+inet+inet6"; "none" for the empty set.
func (f Families) String() string {
	if f == 0 {
		return "none"
	}
	return strings.Join(f.names(), "+")
}

// check refuses a family the built-in profile does not allow.
func (f Families) check() error {
	if extra := f &^ allowable; extra != 0 {
		return fmt.Errorf("seccomp: the built-in profile cannot allow the socket families %s; it allows only unix, inet and inet6", extra)
	}
	return nil
}
