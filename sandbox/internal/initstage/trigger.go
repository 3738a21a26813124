package initstage

/*
#include "zygote.h"

static const char *unfit_flag(int i) { return prefork_unfit_flags[i]; }
*/
import "C"

// PreforkTrigger is the command line that makes zygote.c pre-fork an init
// stage, read from zygote.h's table: the subcommand, and the flags, as
// "name" or "name=value", after which it does not.
func PreforkTrigger() (subcommand string, unfit []string) {
	for i := C.int(0); C.unfit_flag(i) != nil; i++ {
		unfit = append(unfit, C.GoString(C.unfit_flag(i)))
	}
	return C.PREFORK_SUBCOMMAND, unfit
}
