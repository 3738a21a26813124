package initstage

import "os"

// Files are the init stage's descriptors 0–4: the server's stdio, the
// configuration pipe (init_main.c's CONFIG_FD) and the report pipe
// (REPORT_FD); and 5, only with Config.Egress, where it hands over egress
// capture's sockets (EGRESS_FD, an EgressPair end).
type Files struct {
	Stdin, Stdout, Stderr *os.File
	Config, Report        *os.File
	Egress                *os.File
}

func (f Files) list() []*os.File {
	l := []*os.File{f.Stdin, f.Stdout, f.Stderr, f.Config, f.Report}
	if f.Egress != nil {
		l = append(l, f.Egress)
	}
	return l
}
