package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/mcpsandbox/mcpsandbox/hostconfig"
)

// wrap keeps the entries it rewrote beside the host's file, not in it:
// VS Code's mcp.json schema allows no keys of anyone else in an entry
// (additionalProperties false), and a sidecar leaves the entry exactly as
// the host documents it for all three hosts.
const (
	wrapStateSuffix  = ".mcpsandbox-wrap.json"
	wrapBackupSuffix = ".mcpsandbox-backup"
)

// wrapState is FILE.mcpsandbox-wrap.json.
type wrapState struct {
	path    string       // FILE.mcpsandbox-wrap.json
	file    string       // FILE
	Note    string       `json:"note"`
	Entries []wrapRecord `json:"entries"`
}

// wrapRecord is one rewritten entry: its value's bytes before and after.
type wrapRecord struct {
	Section  string `json:"section"`
	Name     string `json:"name"`
	Original string `json:"original"`
	Wrapped  string `json:"wrapped"`
	// Daemon is the daemon's configuration file wrap --daemon added the
	// server to, for --undo to take it out again.
	Daemon string `json:"daemon,omitempty"`
}

func loadWrapState(file string) (*wrapState, error) {
	s := &wrapState{path: file + wrapStateSuffix, file: file}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("%s, where wrap keeps the original entries, does not read: %v (the file's backup is %s)", s.path, err, file+wrapBackupSuffix)
	}
	return s, nil
}

func (s *wrapState) index(e hostconfig.Entry) int {
	return slices.IndexFunc(s.Entries, func(r wrapRecord) bool { return r.Section == e.Section && r.Name == e.Name })
}

// record keeps e as it is before wrap rewrites it.
func (s *wrapState) record(e hostconfig.Entry, daemon string) {
	r := wrapRecord{Section: e.Section, Name: e.Name, Original: string(e.Raw), Daemon: daemon}
	if i := s.index(e); i >= 0 {
		s.Entries[i] = r // wrapped before, then given back by hand
		return
	}
	s.Entries = append(s.Entries, r)
}

func (s *wrapState) forget(e hostconfig.Entry) {
	if i := s.index(e); i >= 0 {
		s.Entries = slices.Delete(s.Entries, i, i+1)
	}
}

// wrapped records e's rewritten bytes in data.
func (s *wrapState) wrapped(e hostconfig.Entry, data []byte) {
	entries, _ := hostconfig.FileEntries(s.file, data)
	for _, w := range entries {
		if w.Section == e.Section && w.Name == e.Name {
			s.Entries[s.index(e)].Wrapped = string(w.Raw)
		}
	}
}

func (s *wrapState) save() error {
	s.Note = "mcpsandbox wrap keeps here the entries it rewrote in " + filepath.Base(s.file) + ", for mcpsandbox wrap --undo"
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return writeConfig(s.path, append(data, '\n'))
}

// writeBackup copies data, file's contents before wrap's first change, to
// FILE.mcpsandbox-backup, unless an earlier run did.
func writeBackup(file string, data []byte) error {
	mode := os.FileMode(0o600)
	if st, err := os.Stat(file); err == nil {
		mode = st.Mode().Perm()
	}
	f, err := os.OpenFile(file+wrapBackupSuffix, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeConfig replaces path's contents at once (a host reading it meanwhile
// sees the old file or the new), through a symlink to where it points, with
// the file's permissions (new files: the user's only; they hold secrets).
func writeConfig(path string, data []byte) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	mode := os.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
