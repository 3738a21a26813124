// Package launch reads a server's launch line the way a user means it
// (`npx -y @scope/pkg`, `python3 server.py`, `node dist/index.js`) and
// finds on this host what confinement then needs: which built-in policy
// fits, the server's name, the interpreter behind a version manager's
// shim, the project a script belongs to, the paths among the arguments,
// the state directory. It is the one reader of launch lines: the name is
// taken from what the policy choice read, never from a second parse.
//
// It is a package of its own because it reads the host, which policy (pure
// data) must not, and knows language runtimes, which sandbox must not.
package launch
