package seccomp

// Positions in a Docker/OCI profile's JSON, so that its errors name the
// line and column to fix.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// entryAt is "file:line:col" of syscalls[i], or the file name alone.
func (p *dockerProfile) entryAt(i int) string {
	if i < len(p.offsets) {
		return p.at(p.offsets[i])
	}
	return p.path
}

// at is "file:line:col" (1-based) of byte offset off.
func (p *dockerProfile) at(off int64) string {
	off = min(max(off, 0), int64(len(p.data)))
	before := p.data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("%s:%d:%d", p.path, line, col)
}

// syscallEntryOffsets finds where each element of the top-level "syscalls"
// array starts, for error positions; nil if the walk fails.
func syscallEntryOffsets(data []byte) []int64 {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if k, _ := key.(string); !strings.EqualFold(k, "syscalls") {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return nil
		}
		var offsets []int64
		for dec.More() {
			off := dec.InputOffset()
			for off < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n,"), data[off]) >= 0 {
				off++
			}
			offsets = append(offsets, off)
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
		}
		return offsets
	}
	return nil
}
