package scope

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Manager is the systemd manager a scope is asked of, and the addresses
// tried to reach it, best first.
type Manager struct {
	User      bool     // the user's manager (user@UID.service); else the system's
	Addresses []string // D-Bus addresses ("unix:path=...")
}

func (m Manager) String() string {
	if m.User {
		return "the systemd user manager"
	}
	return "the systemd system manager"
}

// Systemctl is the systemctl/systemd-run flag that selects this manager.
func (m Manager) Systemctl() string {
	if m.User {
		return "--user "
	}
	return ""
}

// ForThisProcess picks the manager `systemd-run --scope` would use for this
// process: the system manager for root, the user's own manager otherwise.
// env is the process environment (os.Environ()); hosts built on the
// TypeScript SDK pass servers neither DBUS_SESSION_BUS_ADDRESS nor
// XDG_RUNTIME_DIR, so the user's runtime directory is derived from the uid
// as systemd's own tools do.
func ForThisProcess(env []string) Manager {
	return forUID(os.Geteuid(), env)
}

func forUID(uid int, env []string) Manager {
	get := func(name string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v
			}
		}
		return ""
	}
	var addrs []string
	add := func(a string) {
		if a != "" && !slices.Contains(addrs, a) {
			addrs = append(addrs, a)
		}
	}
	if uid == 0 {
		// The manager's private socket needs no bus daemon and is what
		// systemctl uses first; the system bus is the fallback.
		add("unix:path=/run/systemd/private")
		add(get("DBUS_SYSTEM_BUS_ADDRESS"))
		add("unix:path=/run/dbus/system_bus_socket")
		return Manager{User: false, Addresses: addrs}
	}
	runtime := get("XDG_RUNTIME_DIR")
	fallback := "/run/user/" + strconv.Itoa(uid)
	for _, dir := range []string{runtime, fallback} {
		if dir != "" {
			add("unix:path=" + filepath.Join(dir, "systemd/private"))
		}
	}
	if a := get("DBUS_SESSION_BUS_ADDRESS"); strings.HasPrefix(a, "unix:") {
		add(a)
	}
	for _, dir := range []string{runtime, fallback} {
		if dir != "" {
			add("unix:path=" + filepath.Join(dir, "bus"))
		}
	}
	return Manager{User: true, Addresses: addrs}
}

// private reports whether addr is a manager's private socket, which is a
// direct connection: no bus daemon, so no Hello.
func private(addr string) bool { return strings.HasSuffix(addr, "/systemd/private") }

// socketPath is the file behind a "unix:path=" address, or "".
func socketPath(addr string) string {
	rest, ok := strings.CutPrefix(addr, "unix:path=")
	if !ok {
		return ""
	}
	path, _, _ := strings.Cut(rest, ",")
	return path
}

// unreachable is the error when no address of a manager answered.
type unreachable struct {
	m    Manager
	errs []string
}

func (e *unreachable) Error() string {
	return fmt.Sprintf("%s is not reachable (%s)", e.m, strings.Join(e.errs, "; "))
}
