// Package bench measures mcpsandbox against baselines run in the same
// process and the same run, and reports ratios: a relay is judged against a
// minimal line-copying relay (the floor for any relay process) and a direct
// pipe; confinement against bubblewrap; the supervisor binary's own start
// against a minimal Go program's; egress (a confined client reaching a test
// host by name through the supervisor's proxy, across internal/testnet's
// veth, unbounded and bounded to a link's rate) against the same client
// connecting direct, and against a minimal splicing forwarder (the floor
// for any proxy); the daemon (`mcpsandbox daemon`, its own process) by its
// RSS per warm idle server and its CPU with 200 of them heartbeating,
// against an empty daemon, and by attach → first response of a warm
// instance against a cold start and against the server's own first
// initialize, through the client API and the `connect` binary. It holds
// only benchmarks, the three baseline programs and the egress benchmarks'
// client (netclient), so none of it ships in the binary.
package bench
