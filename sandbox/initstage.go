package sandbox

import "github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"

// InitArg0 is argv[0] of the re-executed init stage: PID 1 of the server's
// pid namespace, which builds the sandbox and then stays as the reaper. The
// init stage is C, run by the ELF constructor of package initstage, which
// this package links, before the Go runtime starts: any binary that links
// this package can be re-executed as one.
const InitArg0 = initstage.Arg0

// PreforkTrigger is the command line for which the ELF constructor
// pre-forks the first sandbox's init stage before the Go runtime starts:
// the subcommand, and the flags, as "name" or "name=value", given with one
// dash or two, after which it does not because no pre-forked sandbox would
// fit. A CLI that starts sandboxes checks it against its own flags.
func PreforkTrigger() (subcommand string, unfit []string) { return initstage.PreforkTrigger() }
