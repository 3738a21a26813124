// Package policy holds what one sandboxed MCP server is allowed and how it is
// supervised. It is pure data: parsing, defaults and validation, no side
// effects but reading the policy files it is asked to load. Every flag of
// `mcpsandbox run` is one field here and one key of a policy file (keys.go),
// so that files and the command line can never drift apart.
package policy
