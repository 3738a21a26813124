// Package bench measures mcpsandbox against baselines run in the same
// process and the same run, and reports ratios: a relay is judged against a
// minimal line-copying relay (the floor for any relay process) and a direct
// pipe; confinement against bubblewrap; the supervisor binary's own start
// against a minimal Go program's; egress (a confined client reaching a test
// host by name through the supervisor's proxy, across internal/testnet's
// veth, unbounded and bounded to a link's rate) against the same client
// connecting direct, and against a minimal splicing forwarder (the floor
// for any proxy). It holds only benchmarks, the three baseline programs and
// the egress benchmarks' client (netclient), so none of it ships in the
// binary.
package bench
