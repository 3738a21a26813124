package jsonrpc

// Standard JSON-RPC error codes a relay answers malformed input (and MCP's
// unknown tool) with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeInvalidParams  = -32602 // MCP's answer to a tools/call of an unknown tool
)
