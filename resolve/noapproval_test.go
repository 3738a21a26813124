package resolve

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A built-in's tiers hold unless no-approval takes them away, from a flag
// or a file that extends the built-in (a file's lists can only add).
func TestNoApprovalDropsTheBuiltinsTiers(t *testing.T) {
	h := someoneElse(t)
	line := []string{"npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", h.WorkDir}
	tiers := []string{"write_file", "edit_file", "move_file", "create_directory"}
	r, err := Resolve(Request{Command: line, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if r.Ref != "filesystem" || !slices.Equal(r.Policy.ApproveTools, tiers) || r.NoApprovalDropped != nil {
		t.Fatalf("built-in %s approve-tools %q dropped %q; want filesystem's tiers %q", r.Ref, r.Policy.ApproveTools, r.NoApprovalDropped, tiers)
	}

	over := policy.Default()
	over.NoApproval, over.ApproveAnnotated = true, []string{policy.ApproveDestructive}
	r, err = Resolve(Request{Command: line, Overrides: over, Given: []string{"NoApproval", "ApproveAnnotated"}, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if r.Policy.ApproveTools != nil || r.Policy.ApproveAnnotated != nil || !slices.Equal(r.NoApprovalDropped, append(tiers, "destructive")) {
		t.Errorf("--no-approval: approve-tools %q annotated %q dropped %q; want none, and all of them dropped", r.Policy.ApproveTools, r.Policy.ApproveAnnotated, r.NoApprovalDropped)
	}

	writeFile(t, filepath.Join(h.WorkDir, "trusted.yaml"), "extends: filesystem\nmcp:\n  no-approval: true\n")
	r, err = Resolve(Request{Command: line, Policy: "./trusted.yaml", Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if r.Policy.ApproveTools != nil || !slices.Equal(r.NoApprovalDropped, tiers) || !slices.Contains(r.Policy.ReadWrite, h.WorkDir) {
		t.Errorf("a file with no-approval: approve-tools %q dropped %q rw %q; want no tiers and the built-in's grant", r.Policy.ApproveTools, r.NoApprovalDropped, r.Policy.ReadWrite)
	}
}
