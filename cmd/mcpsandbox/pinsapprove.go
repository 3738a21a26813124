package main

import (
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/lock"
)

// pinsApprove moves held items into the approved contract under the
// lock's own lock, so a relay pinning at the same time loses nothing.
func pinsApprove(p pinsRun) int {
	var approved []string
	var findings [][]string // of each approved item: what is approved is shown as the scanner sees it
	err := lock.Update(p.path, func(f *lock.File) error {
		findings = nil
		approved = nil // Update may call again; say only what was written
		ids, err := p.servers(f)
		if err != nil {
			return err
		}
		for _, id := range ids {
			s := f.Servers[id]
			held, err := pick(id, s, p.items)
			if err != nil {
				return err
			}
			for _, e := range held {
				if e.Reason == removed {
					s.Contract.Delete(e.Kind, e.Key)
					s.Pending.Delete(e.Kind, e.Key)
				} else {
					s.Approve(e.Kind, e.Key)
				}
				approved = append(approved, fmt.Sprintf("approved %s for %s", why(e), displayName(id, s)))
				findings = append(findings, p.findings(f, id, e))
			}
		}
		if len(approved) == 0 {
			if p.name != "" {
				return fmt.Errorf("nothing of %s is held: its contract is as approved", p.name)
			}
			return fmt.Errorf("nothing is held in %s: every contract is as approved", p.path)
		}
		return nil
	})
	if err != nil {
		return p.fail("approve", err)
	}
	for i, line := range approved {
		fmt.Fprintln(p.std.Out, line)
		for _, finding := range findings[i] {
			fmt.Fprintf(p.std.Out, "  finding: %s\n", finding)
		}
	}
	fmt.Fprintf(p.std.Out, "wrote %s: hosts see what was approved from their next list\n", p.path)
	return exitOK
}
