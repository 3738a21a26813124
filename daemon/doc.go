// Package daemon is mcpsandbox's long-running side: it keeps the servers
// of a configuration file (package daemon/config) available to many hosts
// at once, each host session on an instance of its own, supervised as
// `mcpsandbox run` supervises one (package supervisor), with warm
// instances kept ready, a bound on instances per server, and a control
// protocol to see and steer them.
//
// It is a package of its own because it holds what no single relay does:
// the servers of a config and the pools of their instances, the sockets
// and who may use them, reloads and the per-server log rings. The CLI only
// maps its flags to Run (`mcpsandbox daemon`) and speaks the client side
// of the protocol (Dial: `connect`, `status`, `restart`, `logs`, `reload`).
//
// # Resolution
//
// Every entry of the config is resolved exactly as `run` resolves the same
// launch line (package resolve: the built-in the command selects, or the
// entry's policy, the entry's settings over it), for the daemon's host
// with the entry's cwd (default: the config file's directory) as its
// working directory. A config whose entries do not resolve is refused at
// start, and by a reload, at file:line:col.
//
// # Instances
//
// A stdio server serves one session, so each `connect` gets an instance of
// its own (ids NAME#N, N counting up per server for the daemon's life),
// which ends when its client leaves. With prestart N, N instances are kept
// warm (supervisor.Prestart: started and ready, with no host yet); a client
// is given a warm one first and the pool is refilled behind it, once the
// client has had its first answer (at most refillWait later); one that
// comes while a prestart no other client waits for is under way waits for
// it, as it is ready sooner than a fresh start. Failing
// prestarts back off (1 s doubling to 5 min) and are logged once per
// reason. max-instances bounds the instances of a server, warm ones
// included; a client over it is refused (supervisor.CodeServerUnavailable,
// the reason naming the bound and its key).
//
// # Sockets and peers
//
// One socket, daemon.sock: a user's daemon listens in
// $XDG_RUNTIME_DIR/mcpsandbox (mode 0700), root's in /run/mcpsandbox (0755;
// the socket 0666, so every user may reach it and the peer check decides).
// A lock file beside it makes a second daemon of the directory refuse to
// start, naming the first's pid; a socket left by a dead daemon is
// replaced. On accept the peer's uid is read from the kernel (SO_PEERCRED)
// and checked against the server's users (names, uids or "*"; by default
// the daemon's own uid only, which may always connect). Control requests
// are for the daemon's own uid and root. A refused peer is told which uid,
// which server and which key would let it in.
//
// # Protocol
//
// See wire.go: a client's first line is a JSON Hello, the daemon's first
// line answers it, and for connect the raw MCP stream follows both ways.
//
// # Reload
//
// On Options.Reload (SIGHUP) or a reload request the config is read and
// resolved again. An error keeps the running config and is returned at
// file:line:col. A server whose resolved policy is unchanged keeps its
// instances and their sessions (its users, prestart and max-instances are
// applied in place, and a user its users no longer allow loses its
// sessions); a changed server's live instances are stopped and new
// ones get the new settings; a removed server's are stopped; an added one
// starts its pool.
//
// # Logs
//
// Records carry server= (the supervisor's) and instance=. Besides the
// daemon's log (Options.Log: the journal or a rotated file, as the CLI
// chooses), the records of each server, and its audit lines
// (supervisor.Options.AuditTap), are kept in a ring (the last 1000, at
// most 1 MiB) for the logs request, which can follow new ones.
//
// # Shutdown
//
// When ctx ends, the socket is removed first, then every instance gets the
// supervisor's shutdown (requests in flight answered) and Run returns once
// all have ended.
package daemon
