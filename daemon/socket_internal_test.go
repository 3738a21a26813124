package daemon

import (
	"strings"
	"testing"
)

// A user's daemon without XDG_RUNTIME_DIR names the fix; root's needs none.
func TestSocketDirWithoutARuntimeDirectory(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	if _, err := SocketDir(false, none); err == nil || !strings.Contains(err.Error(), "--socket-dir DIR") {
		t.Errorf("no XDG_RUNTIME_DIR: %v", err)
	}
	if dir, err := SocketDir(true, none); err != nil || dir != SystemSocketDir {
		t.Errorf("root: %q, %v", dir, err)
	}
	run := func(string) (string, bool) { return "/run/user/1000", true }
	if socks := ClientSockets(run); len(socks) != 2 || socks[0] != "/run/user/1000/mcpsandbox/daemon.sock" || socks[1] != "/run/mcpsandbox/daemon.sock" {
		t.Errorf("sockets tried: %q", socks)
	}
}
