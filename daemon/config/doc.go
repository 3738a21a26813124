// Package config reads the daemon's configuration file: the named servers
// it keeps up, in the shapes users already have them (a Claude Desktop or
// Cursor mcpServers map, a VS Code servers file with its sandbox settings),
// with mcpsandbox's own keys beside them (policy, prestart, max-instances,
// users). Errors are at FILE:LINE:COL, as a policy file's are.
//
// It is a package of its own because two commands read the file: the
// daemon, which resolves and supervises each server, and `mcpsandbox wrap
// --daemon`, which adds servers to it. Like package policy it is pure data:
// it reads the file, the env files it names and the daemon's own
// environment for the variables it expands, and nothing else; what a
// server runs under is settled by package resolve from what this returns.
package config
