// Package secrets finds what looks like a secret among a JSON value's
// strings: private key blocks, the token formats of GitHub, GitLab, Slack,
// AWS, OpenAI, Anthropic, JSON Web Tokens, and any patterns the caller
// adds. A finding says where (a path such as arguments.files[2].content)
// and which format, never the value, so it can go into a message or a log.
//
// It is a room of its own because it is a scanner with formats to keep up
// to date, not a rule: it knows nothing of MCP or of the relay. The
// tools/call rule in supervisor/mcprules uses it.
//
// Most values hold no secret, so Scan first looks for the formats' fixed
// prefixes in the raw bytes and decodes the value, with paths, only when
// one is there or a JSON escape could hide one.
package secrets
