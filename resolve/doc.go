// Package resolve settles what a server will run under: from a launch
// line, a policy reference (a file, a built-in, or none, and then the
// built-in the launch line selects), the settings a caller overrides and
// the facts of the host it resolves for, it makes the policy to apply,
// with the launch line as read on that host, the policy chosen and why,
// its extends chain and where every setting came from.
//
// It is a package of its own because everything that starts or shows a
// server must resolve it the same way: run, prepare, policy explain and
// policy check (which once refused files run accepted), and the daemon,
// which resolves for entries of its configuration rather than flags, and
// for users other than its own. So the caller hands in its own terms and
// the host (environment, working and home directory), and nothing here
// reads the process it runs in. It sits above launch and policy and below
// the commands; it knows nothing of supervision or MCP.
package resolve
