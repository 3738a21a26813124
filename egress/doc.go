// Package egress is the policy side of the egress network mode: it decides
// and carries every TCP connection a server in its own network namespace
// makes, so that the server reaches exactly the hosts the policy names with
// no proxy setting of its own.
//
// It exists apart from sandbox, which builds the namespace and hands over
// its listening sockets knowing nothing of names or policy, and from
// supervisor, which wires a Proxy into each relay and audits its events.
//
// The parts, in the order a connection meets them:
//
//   - The DNS stub (stub.go) answers a name that some allow entry covers
//     with a synthetic address from Options.Synthetic (198.18.0.0/15 by
//     default): stable for the Proxy's life, never given to another name,
//     a 5 s TTL. Other names get NXDOMAIN, and Proxy.Denied names
//     them. The table holds 4096 names.
//   - The proxy (proxy.go, conn.go) accepts on the capture listeners. The
//     address a connection was made to (its LocalAddr) maps back to the name;
//     policy.HostRules decides name and port (or an IP literal and port);
//     a denied connection is reset at once.
//   - The dialer (dial.go, resolver.go, floor.go) resolves the name on the
//     host side, refuses every address under the SSRF floor (loopback,
//     link-local, private, the host's own addresses...) unless the policy
//     names that address itself, and connects to a checked address without
//     resolving again, so no rebinding can slip between check and connect.
//   - Bytes are copied both ways with io.Copy between TCP sockets (splice on
//     Linux), half-closes passed on, with no idle timeout.
//
// Every connection, allowed or not, is one Conn given to Options.OnOpen and
// Options.OnClose and one log line: name, port, the address dialled, bytes
// each way, duration, and for a denied one the reason and the --allow-host
// that would allow it. Repeated denials and failed dials of one destination
// are counted, not each logged (the first, the 10th, the 100th...). The
// hosts denied, names and destinations, are kept for Denied (the first
// MaxDeniedHosts; the rest counted), so the supervisor can name them to
// the host; NewOffline's Proxy is a resolver alone for a server with no
// network, which answers every name NXDOMAIN and notes it so. A hostile server cannot grow the Proxy's memory
// without bound: names, resolutions, open connections and DNS-over-TCP
// connections are all capped.
package egress
