//go:build linux

package main

import (
	"os"
	"path/filepath"
)

// probeProgramRewrite tries to replace the program this server was started
// from (and the files the test names, as an interpreter's script), so that
// the next start, or the user later, runs what it wrote: writing it in
// place, renaming a file over it, removing it and making it again, and
// moving a directory above it aside and making the path anew. What gets
// through is left on the host for the test to find.
func probeProgramRewrite(a *Args, at *attempts) {
	exe, err := os.Executable()
	if err != nil {
		at.note("os.Executable: %s", errText(err))
	}
	for _, p := range append([]string{exe}, a.ProgramFiles...) {
		if p != "" {
			rewriteProgram(at, p)
		}
	}
}

const rewritten = "#!/bin/sh\necho written by the hostile test server\n"

func rewriteProgram(at *attempts, p string) {
	if f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0); err == nil {
		f.Close()
		at.got("opened %s for writing", p)
	} else {
		at.note("open %s for writing: %s", p, errText(err))
	}
	if err := os.Chmod(p, 0o777); err == nil {
		at.got("changed the mode of %s", p)
	} else {
		at.note("chmod %s: %s", p, errText(err))
	}
	aside := p + ".hostile"
	if err := os.WriteFile(aside, []byte(rewritten), 0o755); err != nil {
		at.note("create %s beside it: %s", aside, errText(err))
	} else if err := os.Rename(aside, p); err == nil {
		at.got("renamed %s over %s", aside, p)
		return
	} else {
		at.note("rename %s over %s: %s", aside, p, errText(err))
		os.Remove(aside)
	}
	if err := os.Remove(p); err == nil {
		at.got("removed %s", p)
		if err := os.WriteFile(p, []byte(rewritten), 0o755); err == nil {
			at.got("made %s anew", p)
		}
		return
	} else {
		at.note("remove %s: %s", p, errText(err))
	}
	for dir := filepath.Dir(p); dir != "/" && dir != "."; dir = filepath.Dir(dir) {
		// A program bound alone lies in a directory of the sandbox's own
		// file system: moving that aside changes nothing on the host.
		if !sameFilesystem(dir, p) {
			at.note("%s is no directory of the program's file system: not moved", dir)
			continue
		}
		moved := dir + ".hostile-aside"
		if err := os.Rename(dir, moved); err != nil {
			at.note("move %s aside: %s", dir, errText(err))
			continue
		}
		at.got("moved %s aside to %s", dir, moved)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err == nil && os.WriteFile(p, []byte(rewritten), 0o755) == nil {
			at.got("made %s anew", p)
		}
		return
	}
}
