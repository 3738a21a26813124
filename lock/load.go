package lock

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"

	"github.com/tailscale/hujson"
)

// restoreFix is the fix for a lock that was edited into something this
// package will not guess the meaning of.
const restoreFix = "restore the lock from version control, or delete this server's entry so that it is pinned again at its next start"

// Load reads the lock at path. A missing file is an empty lock. A file that
// does not parse, holds an unknown key or a wrong type, is of another
// version, or has an entry whose hash or key does not match its text is an
// *Error "FILE:LINE:COL: what: fix", and is never repaired: a lock edited
// into an inconsistent state must not quietly become a new pin.
func Load(path string) (*File, error) {
	f, _, err := load(path)
	return f, err
}

// load is Load and the bytes it read (nil for a missing file).
func load(path string) (*File, []byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	f, err := Parse(path, data)
	return f, data, err
}

// Parse reads a lock's bytes; path names it in errors.
func Parse(path string, data []byte) (*File, error) {
	c := &checker{file: path, data: data}
	if off, what, bad := syntaxOffset(data); bad {
		if len(data) == 0 {
			return nil, c.fail(0, "the lock is empty", "delete the file to start a new lock, or restore it from version control")
		}
		return nil, c.fail(off, "not JSON: "+what, "fix the JSON syntax at this place (mcpsandbox never rewrites a lock it cannot read)")
	}
	root, err := hujson.Parse(data)
	if err != nil {
		return nil, c.fail(0, "not JSON: "+err.Error(), "fix the JSON syntax")
	}
	if err := c.check(&root, fileShape, ""); err != nil {
		return nil, err
	}
	var form fileJSON
	if err := json.Unmarshal(data, &form); err != nil {
		return nil, c.fail(0, err.Error(), restoreFix)
	}
	if v := member(&root, "version"); v == nil || form.Version != Version {
		at, got := 0, "no version"
		if v != nil {
			at, got = v.Value.StartOffset, "version "+string(v.Value.Value.(hujson.Literal))
		}
		return nil, c.fail(at, got+" is not one this mcpsandbox reads (it reads version 1)",
			`write "version": 1 if the file is in version 1's form, or use the mcpsandbox that wrote it`)
	}
	return c.fromForm(&root, &form)
}
