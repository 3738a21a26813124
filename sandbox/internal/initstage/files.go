package initstage

import "os"

// Files are the init stage's descriptors 0–4: the server's stdio, the
// configuration pipe (init_main.c's CONFIG_FD) and the report pipe
// (REPORT_FD).
type Files struct {
	Stdin, Stdout, Stderr *os.File
	Config, Report        *os.File
}

func (f Files) list() []*os.File {
	return []*os.File{f.Stdin, f.Stdout, f.Stderr, f.Config, f.Report}
}
