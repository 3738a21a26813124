package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
)

// checkServerIdentity says what keeps servers' files apart: as root, a uid
// per server recorded in the registry, which must be usable; unprivileged,
// nothing but their grants (a documented limit, hence a warning).
func checkServerIdentity(root bool) Check {
	if !root {
		return Check{Part: "server identity", Detail: fmt.Sprintf(
			"every server runs as your uid %d: a file in a grant two servers share is open to both (each sees only its own grants)", os.Getuid()),
			Fix: "give servers disjoint grants, or run mcpsandbox as root for a uid per server"}
	}
	c := Check{Part: "dynamic uids", Required: true, Fix: "make " + idRegistry + " a directory of root's, mode 0700, or give every server {User}"}
	if err := openRegistry(); err != nil {
		c.Detail = detail(err)
		return c
	}
	// Recording an id writes an entry aside first: try that much.
	probe := filepath.Join(idRegistry, ".new-doctor")
	f, err := os.OpenFile(probe, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err == nil {
		f.Close()
		err = os.Remove(probe)
	}
	if err != nil {
		c.Detail = "the registry " + idRegistry + " is not writable: " + detail(err)
		return c
	}
	n, err := registryCount()
	if err != nil {
		c.Detail = "reading the registry " + idRegistry + ": " + detail(err)
		return c
	}
	if n >= DynamicIDCount {
		c.Detail = fmt.Sprintf("all %d uids are recorded for servers in %s", DynamicIDCount, idRegistry)
		c.Fix = "remove the entries of servers you no longer run, together with the files their uids own, or give every server {User}"
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("a uid per server (its command, grants, network, environment, seccomp) from %d; %d of %d recorded in %s",
		DynamicIDFirst, n, DynamicIDCount, idRegistry)
	return c
}
