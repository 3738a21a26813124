// Package contract is what a server tells the model (its tools, prompts,
// resources, resource templates, instructions, serverInfo and capabilities)
// in the form that is pinned, hashed and diffed.
//
// It is a package of its own because the lock, the relay's pin rule, the pins
// commands and upgrade all need one and the same canonical form: an item's
// Text is the RFC 8785 canonical JSON of its contract fields only, so that
// volatile fields (_meta, nextCursor, ttlMs, cacheScope, resultType) and list
// order never change a hash, and every field the model reads does. It is
// pure: it reads bytes and writes text, and knows nothing of files or relays.
package contract
