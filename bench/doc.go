// Package bench measures mcpsandbox against baselines run in the same
// process and the same run, and reports ratios: a relay is judged against a
// minimal line-copying relay (the floor for any relay process) and a direct
// pipe; confinement against bubblewrap; the supervisor binary's own start
// against a minimal Go program's. It holds only benchmarks and the three
// baseline programs, so none of it ships in the binary.
package bench
