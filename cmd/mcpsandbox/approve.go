package main

import (
	"fmt"
	"io"
	"time"

	"github.com/mcpsandbox/mcpsandbox/lock"
)

// approveCommand is `mcpsandbox approve ID | --list [OPTIONS]`: a person
// grants a tool call that a host which cannot ask was refused with an id
// (the deferred path of approval tiers, docs/approval.md).
func approveCommand(args []string, std stdio) int {
	fs := newFlagSet("approve")
	where := addLockFlags(fs)
	list := fs.Bool("list", false, "")
	words, status, ok := interspersed(fs, "approve", args, std)
	if !ok {
		return status
	}
	switch {
	case *list && len(words) > 0:
		return usageFailure("approve", "give an ID or --list, not both", std)
	case !*list && len(words) == 0:
		return usageFailure("approve", "say which call to approve: the ID its error named (approve --list shows the waiting ones)", std)
	case len(words) > 1:
		return usageFailure("approve", "approve one ID at a time: each is one call with its own arguments", std)
	}
	path, _, err := where.path()
	if err != nil {
		return usageFailure("approve", err.Error(), std)
	}
	std.Out, std.Err = visibleWriter{std.Out}, visibleWriter{std.Err}
	now := time.Now()
	if *list {
		return approveList(path, now, std)
	}
	a, err := lock.Approve(path, words[0], now)
	if err != nil {
		fmt.Fprintf(std.Err, "mcpsandbox approve: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(std.Out, "approved %s: %s of %s, once, with these arguments:\n", words[0], a.Tool, approvalServer(a))
	writeApproval(std.Out, a, now)
	fmt.Fprintf(std.Out, "The host's next call of %s with the same arguments goes through; other arguments are asked anew.\n", a.Tool)
	return exitOK
}

// approveList prints every call that waits, or was approved and not yet
// made, in the lock.
func approveList(path string, now time.Time, std stdio) int {
	f, err := lock.Load(path)
	if err != nil {
		fmt.Fprintf(std.Err, "mcpsandbox approve --list: %v\n", err)
		return exitFailure
	}
	ids := f.OpenApprovals(now)
	if len(ids) == 0 {
		fmt.Fprintf(std.Out, "no call waits for approval in %s\n", path)
		return exitOK
	}
	fmt.Fprintf(std.Out, "lock %s\n", path)
	for _, id := range ids {
		a := f.Approvals[id]
		state := "waiting"
		if a.Approved != nil {
			state = "approved, not yet called"
		}
		fmt.Fprintf(std.Out, "%s  %s of %s (%s)\n", id, a.Tool, approvalServer(a), state)
		writeApproval(std.Out, a, now)
	}
	return exitOK
}

func approvalServer(a *lock.Approval) string {
	if a.Name != "" {
		return a.Name
	}
	return a.Server
}

// writeApproval is what a person decides on: the masked arguments, when it
// was asked and when it expires.
func writeApproval(w io.Writer, a *lock.Approval, now time.Time) {
	summary := a.Summary
	if summary == "" {
		summary = "(none recorded)"
	}
	fmt.Fprintf(w, "    arguments  %s\n", summary)
	fmt.Fprintf(w, "    asked      %s\n", a.Asked.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "    expires    %s (in %s)\n", a.Expires.UTC().Format(time.RFC3339), a.Expires.Sub(now).Round(time.Second))
}
