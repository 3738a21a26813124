package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcpsandbox/mcpsandbox/daemon"
)

// defaultDaemonConfig is the file `wrap --daemon` adds servers to: that of
// the daemon `mcpsandbox status` would report on, so that the servers
// reach the daemon the user runs; else the user service's own
// (packaging.UserConfig, which `service install --user` runs).
func defaultDaemonConfig(home string) string {
	if ds := answeringDaemons(); len(ds) > 0 {
		return ds[0].status.Config
	}
	return filepath.Join(home, ".config", "mcpsandbox", "daemon.json")
}

// answeringDaemon is a daemon that answered this user's status request.
type answeringDaemon struct {
	socket string
	status *daemon.Status
}

// answeringDaemons are the daemons on the sockets a client tries that
// answer this user's control requests (a system daemon answers root only).
func answeringDaemons() []answeringDaemon {
	return answeringDaemonsAt(daemon.ClientSockets(os.Geteuid(), os.LookupEnv))
}

// answeringDaemonsAt are the daemons on socks that answer.
func answeringDaemonsAt(socks []string) []answeringDaemon {
	var out []answeringDaemon
	for _, sock := range socks {
		c, a, err := daemon.Dial(sock, daemon.Hello{Control: daemon.ControlStatus})
		if err != nil || !a.OK { // (a refusal closes the connection)
			continue
		}
		c.Close()
		if a.Status != nil {
			out = append(out, answeringDaemon{sock, a.Status})
		}
	}
	return out
}

// reloadDaemonsOf has each running daemon whose config is path read it
// again, so the servers wrap added or took out are kept or dropped at
// once, and says what came of it; or, with none, how to apply the file.
func reloadDaemonsOf(path string, std stdio) {
	reloadDaemonsAt(path, daemon.ClientSockets(os.Geteuid(), os.LookupEnv), std)
}

// reloadDaemonsAt is reloadDaemonsOf for the daemons on socks.
func reloadDaemonsAt(path string, socks []string, std stdio) {
	reloaded := false
	for _, d := range answeringDaemonsAt(socks) {
		if !sameFile(d.status.Config, path) {
			continue
		}
		c, a, err := daemon.Dial(d.socket, daemon.Hello{Control: daemon.ControlReload})
		switch {
		case err != nil:
			fmt.Fprintf(std.Out, "  the daemon (pid %d) did not read it again: %v; run `mcpsandbox reload`\n", d.status.Pid, err)
			continue
		case !a.OK:
			fmt.Fprintf(std.Out, "  the daemon (pid %d) did not read it again: %s\n", d.status.Pid, a.Error.Reason)
			continue
		}
		c.Close()
		fmt.Fprintf(std.Out, "  the daemon (pid %d) read it again: %s\n", d.status.Pid, a.Reload.Summary())
		reloaded = true
	}
	if !reloaded {
		fmt.Fprintf(std.Out, "  no running daemon reads it: start one with `mcpsandbox daemon --config %s` (or `mcpsandbox service install --user` for ~/.config/mcpsandbox/daemon.json)\n", path)
	}
}
