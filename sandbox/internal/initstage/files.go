package initstage

import "os"

// Files are the init stage's descriptors 0–4: the server's stdio, the
// configuration pipe (init_main.c's CONFIG_FD) and the report pipe
// (REPORT_FD); 5, with Config.Egress, where it hands over egress capture's
// sockets (EGRESS_FD, an EgressPair end); and 6, the Landlock ruleset when
// the configuration has Landlock rules (LANDLOCK_FD).
type Files struct {
	Stdin, Stdout, Stderr *os.File
	Config, Report        *os.File
	Egress                *os.File // nil: no egress capture
	Landlock              *os.File // nil: no Landlock
}

func (f Files) list() []*os.File {
	l := []*os.File{f.Stdin, f.Stdout, f.Stderr, f.Config, f.Report}
	if f.Egress != nil || f.Landlock != nil {
		l = append(l, f.Egress) // fd 5; nil: a gap (Landlock alone)
	}
	if f.Landlock != nil {
		l = append(l, f.Landlock)
	}
	return l
}
