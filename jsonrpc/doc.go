// Package jsonrpc is the JSON-RPC 2.0 wire code of a relay that passes
// messages on without decoding them: a bounded line reader (one message per
// '\n'-terminated line, read in place, a big one into memory handed back to
// the OS after it; an oversized line discarded as it streams in, its id
// still found), a single-pass scanner that validates a line as JSON and
// finds its top-level id, method, result (and an object result's members)
// and error as byte spans, byte
// splicing to rewrite an id, and builders for the few messages a relay
// writes itself.
//
// It exists apart from package supervisor because framing and scanning are
// one concern with their own tests, fuzz targets and benchmarks, tuned for
// throughput (a 16 MiB result must cost little more than its copies), while
// the relay decides what the messages mean. It knows nothing of MCP's
// methods or rules, of policy or of the sandbox.
package jsonrpc
