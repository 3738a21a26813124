package initstage

import "os"

// Files are the init stage's descriptors 0–4: the server's stdio, the
// configuration pipe (init_main.c's CONFIG_FD) and the report pipe
// (REPORT_FD); and 5 (init.h's LANDLOCK_FD), the Landlock ruleset, when
// the configuration has Landlock rules.
type Files struct {
	Stdin, Stdout, Stderr *os.File
	Config, Report        *os.File
	Landlock              *os.File // nil: no Landlock
}

func (f Files) list() []*os.File {
	l := []*os.File{f.Stdin, f.Stdout, f.Stderr, f.Config, f.Report}
	if f.Landlock != nil {
		l = append(l, f.Landlock)
	}
	return l
}
