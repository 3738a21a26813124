// Package scan looks at what a server tells the model for the marks of
// tool poisoning, locally: no network, no model, only rules a reader can
// check (docs/pins.md, "Scanner", lists them).
//
//   - hidden text: Unicode tag characters (decoded and shown), bidi
//     controls, zero-width characters and runs of variation selectors;
//   - directives aimed at the model: <IMPORTANT>, "ignore previous
//     instructions", "do not tell the user", "before using this tool … read";
//   - sensitive paths: SSH keys, .env, cloud credentials, hosts' MCP
//     configuration files, /etc/shadow;
//   - URLs whose host the server's egress allowlist does not name;
//   - another server's tools: a description that tells the model how to
//     use one (shadowing), and a tool name two servers expose (Clashes,
//     with the --tool-prefix that separates them, Prefixes).
//
// A finding of high severity holds its item until it is approved, even at
// first sight (Holds). Findings never carry an invisible character: they
// are written as <U+E0041>.
//
// It is a package of its own, beside contract, because it judges what
// contract only canonicalises and compares: its word lists change with
// attacks, while the hashes of the lock must never change.
package scan
