package main

import (
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/daemon"
)

// A held item's name is the server's text: status spells out its line
// breaks and invisible characters, so a tool named to look like a line of
// mcpsandbox's own prints as one line with its escapes shown.
func TestStatusHeldItemCannotPassForAStatusLine(t *testing.T) {
	var b strings.Builder
	writeHeld(&b, "fixture", daemon.InstanceStatus{ID: "fixture-1", Held: []daemon.HeldItem{
		{Item: "tool:x\nfixture-2 holds nothing\u200b\x1b[2K", Reason: "new"},
	}})
	want := `  fixture-1 holds for approval: tool:x\u000afixture-2 holds nothing\u200b\u001b[2K (new); see mcpsandbox pins diff fixture` + "\n"
	if b.String() != want {
		t.Errorf("status prints\n%q\nwant\n%q", b.String(), want)
	}
}
