// Package scope asks the systemd manager this process runs under for a
// transient scope unit with Delegate=yes that holds this process: a cgroup
// v2 subtree of its own, where it may create its servers' cgroups, when the
// cgroup it was started in cannot give it one (a desktop host's app scope,
// a login session, a service shared with other processes). This is what
// `systemd-run --scope -p Delegate=yes` and rootless podman do.
//
// It is a package of its own because it is the only part of the sandbox
// that speaks D-Bus, and the daemon will ask for scopes the same way.
package scope
