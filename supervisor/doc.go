// Package supervisor keeps a host's MCP session alive across the life and
// death of the server processes behind it: it relays JSON-RPC exactly, pings
// the server, restarts it on crash or hang and replays the session onto the
// new process.
package supervisor
