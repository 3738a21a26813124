package initstage

/*
#define INIT_STAGE_GO
#include "init.h"
*/
import "C"

import (
	"encoding/binary"
	"strings"
)

const cfgLandlock = C.CFG_LANDLOCK

// Landlock is what the init stage adds to the ruleset the supervisor
// created (with its handled rights and scopes) before the server restricts
// itself with it (init_landlock.c): rules that exist only once the root is
// built, since they name the sandbox's own places.
type Landlock struct {
	RootAccess    uint64   // access rights granted beneath the sandbox's root
	PrivateAccess uint64   // and beneath each of Places
	Places        []string // clean absolute paths of the sandbox's own tmpfs
}

func (l *Landlock) encode() []byte {
	v := binary.LittleEndian.AppendUint64(nil, l.RootAccess)
	v = binary.LittleEndian.AppendUint64(v, l.PrivateAccess)
	return append(v, strings.Join(l.Places, "\x00")...)
}
