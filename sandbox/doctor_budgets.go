package sandbox

// checkUserBudgets says which per-user kernel budgets a server shares with
// the user it runs as. Under its own uid (a root supervisor) it shares
// none. Under the caller's uid (a user namespace) inotify, queued signals
// and message queues are capped for the sandbox (initstage's init.h), but
// two budgets have no per-namespace limit and nothing lower to bound them
// with: pipe buffer pages (fs.pipe-user-pages-soft, counted per host uid)
// and descriptors in flight over unix sockets (counted per host uid,
// bounded only by the sender's own NoFile). Not required: a warning.
func checkUserBudgets(root bool) Check {
	c := Check{Part: "per-user budgets"}
	if root {
		c.OK, c.Detail = true, "each server's uid has budgets of its own (pipes, inotify, signals, message queues, descriptors in flight)"
		return c
	}
	pages, _ := readSysctl("/proc/sys/fs/pipe-user-pages-soft")
	c.Detail = "shared with your uid: pipe buffer pages (fs.pipe-user-pages-soft " + pages + ": once a server takes them, your programs' F_SETPIPE_SZ fails with EPERM) and descriptors in flight over unix sockets (up to the server's {NoFile}; then your programs' fd passing fails with ETOOMANYREFS); inotify, queued signals and message queues are capped for the server"
	c.Fix = "run mcpsandbox as root (a uid per server), which isolates them"
	return c
}
