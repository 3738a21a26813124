// Package hostconfig reads and edits the MCP server entries of hosts'
// configuration files (Claude Desktop's and Cursor's mcpServers, VS Code's
// servers in mcp.json and under mcp in settings.json, JSON with comments
// and trailing commas) in place: bytes in, bytes out, every byte it does
// not rewrite left as it was, so a user's key order, indentation, comments,
// line endings and other settings survive an edit.
//
// It is a package of its own because two edits share it: `mcpsandbox wrap`
// rewrites a host's entries to run through mcpsandbox, and `wrap --daemon`
// adds them to the daemon's configuration file. It knows nothing of
// policies, supervision or the daemon: it says what an entry is (stdio,
// remote, sandboxed by its host, already wrapped) and changes its bytes.
package hostconfig
