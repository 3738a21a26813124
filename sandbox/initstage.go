package sandbox

import "github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"

// PreforkTrigger is the command line for which the ELF constructor
// pre-forks the first sandbox's init stage before the Go runtime starts:
// the subcommand, and the flags, as "name" or "name=value", given with one
// dash or two, after which it does not because no pre-forked sandbox would
// fit. A CLI that starts sandboxes checks it against its own flags.
func PreforkTrigger() (subcommand string, unfit []string) { return initstage.PreforkTrigger() }
