package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Load reads the lock at path. A missing file is an empty lock. A file that
// does not parse, holds an unknown key or a wrong type, is of another
// version, or has an entry whose hash or key does not match its text is an
// error "FILE:LINE:COL: what: fix", and is never repaired: a lock edited
// into an inconsistent state must not quietly become a new pin.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads a lock's bytes; path names it in errors.
func Parse(path string, data []byte) (*File, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return New(), nil
	}
	var form fileJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&form); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fromForm(path, &form)
}
