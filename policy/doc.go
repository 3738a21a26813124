// Package policy holds what one sandboxed MCP server is allowed and how it is
// supervised. It is pure data: parsing, defaults and validation, no side
// effects. Every flag of `mcpsandbox run` is one field here, so that a policy
// file (a later issue) and the command line can never drift apart.
package policy
