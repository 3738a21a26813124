package sandbox

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// idRegistry records, for every dynamic id ever given out, the key of the
// server it was given to: one file per id, named by the id, holding the
// key's hex digest and, on a second line, the server's label for people.
// An id once recorded is never given to another key, across reboots too,
// since files it owns may lie in grants other servers share; only a state
// directory moved to its new name takes its id along (MoveStateDir), the
// entry then recording the new path's key. Instances of
// one key running at once share its id. Entries are created whole (written
// aside, then hard-linked into place), so a reader never sees half of one,
// and anything unreadable counts as taken. Removing an entry frees the id:
// do so only together with every file that uid owns.
var idRegistry = "/var/lib/mcpsandbox/ids"

// idRegistryFix is how to repair an unusable registry.
const idRegistryFix = "make it a directory of root's, mode 0700, or give the server {User}"

// leaseDynamicID returns the id recorded for key, or records the first free
// id from key's preferred one on.
func leaseDynamicID(key serverKey, label string) (uint32, error) {
	if err := openRegistry(); err != nil {
		return 0, err
	}
	want := key.String()
	start := key.preferred()
	searched := false
	for i := uint32(0); i < DynamicIDCount; i++ {
		id := DynamicIDFirst + (start+i)%DynamicIDCount
		p := filepath.Join(idRegistry, strconv.FormatUint(uint64(id), 10))
		owner, err := registryOwner(p)
		if errors.Is(err, fs.ErrNotExist) && !searched {
			// A key whose entry was moved (MoveStateDir) is not on the way
			// from its preferred id: looked for once, before claiming.
			searched = true
			if moved, err := recordedUID(key); err != nil || moved != 0 {
				if err != nil {
					return 0, registryError(err)
				}
				return moved, nil
			}
		}
		if errors.Is(err, fs.ErrNotExist) {
			err = claimID(p, want+"\n"+label+"\n")
			if err == nil {
				return id, nil
			}
			if !errors.Is(err, fs.ErrExist) {
				return 0, registryError(fmt.Errorf("recording uid %d: %w", id, err))
			}
			// Another supervisor recorded it meanwhile, maybe for this key.
			owner, err = registryOwner(p)
		}
		if err != nil {
			return 0, registryError(fmt.Errorf("reading uid %d's entry: %w", id, err))
		}
		if owner == want {
			return id, nil
		}
	}
	return 0, &field.Error{Problem: fmt.Sprintf("allocating a sandbox uid: all %d uids from %d are recorded for other servers in %s", DynamicIDCount, DynamicIDFirst, idRegistry),
		Fix: "remove the entries of servers you no longer run, together with the files their uids own, or give the server {User}"}
}

func registryError(err error) error {
	return &field.Error{Problem: "allocating a sandbox uid in " + idRegistry, Err: err, Fix: idRegistryFix}
}

// openRegistry creates the registry if need be and refuses one others could
// change: whoever can remove an entry could hand its uid, and the files it
// owns, to another server.
func openRegistry() error {
	if err := os.MkdirAll(idRegistry, 0o700); err != nil {
		return registryError(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(idRegistry, &st); err != nil {
		return registryError(err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return registryError(errors.New("it is not a directory"))
	case st.Uid != 0:
		return registryError(fmt.Errorf("it is owned by uid %d, not root", st.Uid))
	case st.Mode&0o022 != 0:
		return registryError(fmt.Errorf("it is writable by others (mode %o)", st.Mode&0o7777))
	}
	return nil
}

// registryOwner returns the key recorded in the entry at p; an empty or
// unparsable entry is an owner nobody matches.
func registryOwner(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if len(line) != 2*len(serverKey{}) {
		return "?", nil
	}
	return string(line), nil
}

// claimID creates the entry p holding content, or fails with fs.ErrExist.
// It is durable before the server runs as the id: a crash must not forget
// an id that may own files.
func claimID(p, content string) error {
	tmp, err := writeAside(filepath.Dir(p), content)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, p); err != nil {
		return err
	}
	return syncDir(filepath.Dir(p))
}

// writeAside writes content durably to a new file in dir, for an entry
// to be put in place whole.
func writeAside(dir, content string) (string, error) {
	var r [8]byte
	rand.Read(r[:])
	tmp := filepath.Join(dir, ".new-"+hex.EncodeToString(r[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// recordedUID is the uid recorded for key, 0 if none.
func recordedUID(key serverKey) (uint32, error) {
	ents, err := os.ReadDir(idRegistry)
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		id, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil {
			continue
		}
		if owner, err := registryOwner(filepath.Join(idRegistry, e.Name())); err == nil && owner == key.String() {
			return uint32(id), nil
		}
	}
	return 0, nil
}

// registryCount is how many ids the registry records.
func registryCount() (int, error) {
	ents, err := os.ReadDir(idRegistry)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.ParseUint(e.Name(), 10, 32); err == nil {
			n++
		}
	}
	return n, nil
}

// ForgetStateDir frees the dynamic id recorded for the state directory
// path, if any. Call it only once path and every file its uid owns are
// gone: `mcpsandbox upgrade` prepares and probes a candidate in a
// temporary state directory, which would otherwise keep an id for good.
func ForgetStateDir(path string) error {
	if _, err := os.Stat(idRegistry); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	id, err := recordedUID(stateDirKey(path))
	if err != nil || id == 0 {
		return err
	}
	err = os.Remove(filepath.Join(idRegistry, strconv.FormatUint(uint64(id), 10)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
