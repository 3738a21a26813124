package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
)

// pinsDiff shows each held item against what was approved, as a reviewer
// reads it, with the command that approves them.
func pinsDiff(p pinsRun) int {
	f, ids, status, ok := p.open("diff")
	if !ok {
		return status
	}
	shown := 0
	for _, id := range ids {
		s := f.Servers[id]
		held, err := pick(id, s, p.items)
		if err != nil {
			return p.fail("diff", err)
		}
		if len(held) == 0 {
			continue
		}
		if shown > 0 {
			fmt.Fprintln(p.std.Out)
		}
		shown++
		writeServerHead(p.std.Out, id, s, false)
		fmt.Fprintln(p.std.Out)
		var names []string
		for _, e := range held {
			old, _ := s.Contract.Get(e.Kind, e.Key)
			seen := e.Item
			if e.Reason == removed {
				seen = contract.Item{Kind: e.Kind, Key: e.Key}
			}
			change := contract.Compare(old, seen)
			contract.Render(p.std.Out, []contract.Change{change})
			if change.Op == contract.Added { // all of it is new: show it whole
				writeText(p.std.Out, e.Item.Text)
			}
			for _, finding := range p.findings(f, id, e) {
				fmt.Fprintf(p.std.Out, "  finding: %s\n", finding)
			}
			names = append(names, e.Name())
		}
		fmt.Fprintf(p.std.Out, "approve with: mcpsandbox pins approve %s\n", cmdline.ShellJoin(append(append(p.lockArgs[:len(p.lockArgs):len(p.lockArgs)], argName(f, id)), names...)))
	}
	if shown == 0 {
		what := p.path
		if p.name != "" {
			what = p.name + " in " + p.path
		}
		fmt.Fprintf(p.std.Out, "nothing is held for %s: every contract is as approved\n", what)
	}
	return exitOK
}

// writeText writes a new item's text whole (its schema and annotations
// too, which Render's prose fields leave out), under a marker.
func writeText(w io.Writer, text json.RawMessage) {
	fmt.Fprintln(w, "  as listed:")
	var b bytes.Buffer
	if json.Indent(&b, text, "  | ", "  ") != nil {
		b.Reset()
		b.Write(text)
	}
	fmt.Fprintf(w, "  | %s\n", b.Bytes())
}

// pinsVerify exits 1 when anything is held or the lock does not load:
// what CI runs on a committed lock.
func pinsVerify(p pinsRun) int {
	if _, err := os.Stat(p.path); errors.Is(err, fs.ErrNotExist) {
		return p.fail("verify", fmt.Errorf("no lock at %s: nothing is pinned to verify against (a server's first session pins it; or give --lock FILE)", p.path))
	}
	f, ids, status, ok := p.open("verify")
	if !ok {
		return status
	}
	drifted := 0
	for _, id := range ids {
		s := f.Servers[id]
		if held := heldNames(s); len(held) > 0 {
			drifted++
			fmt.Fprintf(p.std.Out, "%s: held %s\n", argName(f, id), strings.Join(held, ", "))
		}
	}
	if drifted > 0 {
		fmt.Fprintf(p.std.Err, "mcpsandbox pins verify: %d of %d servers drifted from %s: review with `%s`, then approve with `%s NAME ITEM...`\n", drifted, len(ids), p.path, cmdline.ShellJoin(append([]string{"mcpsandbox", "pins", "diff"}, p.lockArgs...)), cmdline.ShellJoin(append([]string{"mcpsandbox", "pins", "approve"}, p.lockArgs...)))
		return exitFailure
	}
	fmt.Fprintf(p.std.Out, "ok: %s pins %s, nothing held\n", p.path, plural(len(ids), "server"))
	return exitOK
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}
