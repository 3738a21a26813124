package main

import (
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/sandbox"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// npm's debug log of an npx whose puppeteer postinstall failed, as npm
// 11 writes it.
const puppeteerLog = `24 info run puppeteer@24.1.0 postinstall node_modules/puppeteer node install.mjs
25 info run puppeteer@24.1.0 postinstall { code: 1, signal: null }
26 verbose exit 1
`

// A failed prepare's line names the script npm's log says failed, the
// hosts the install was kept from, the prepare command that allows them
// and, for a package known to download at install, the variable that
// skips it, as a command too.
func TestPrepareFailureLine(t *testing.T) {
	f := prepareFailure{
		once:   supervisor.Once{Exit: sandbox.Exit{Code: 1}, Refused: []string{"storage.googleapis.com"}},
		script: scriptOf([]byte(puppeteerLog)),
		args:   []string{"--", "npx", "-y", "puppeteer-mcp-server"},
	}
	want := "fetching the packages failed (exited with status 1): the postinstall script of puppeteer@24.1.0 (node install.mjs) exited with status 1" +
		" and tried to reach storage.googleapis.com (not allowed); prepare with: mcpsandbox prepare --allow-host storage.googleapis.com -- npx -y puppeteer-mcp-server" +
		", or skip the download: mcpsandbox prepare --env PUPPETEER_SKIP_DOWNLOAD=true -- npx -y puppeteer-mcp-server"
	if got := f.String(); got != want {
		t.Errorf("the line:\n%s\nwant\n%s", got, want)
	}

	// Nothing refused: what the tool said last, quoted.
	f.once.Refused, f.script, f.last = nil, npmScript{}, "npm error code E404\x1b[2J"
	if got := f.String(); got != `fetching the packages failed (exited with status 1); its last line: "npm error code E404\x1b[2J"` {
		t.Errorf("the line: %s", got)
	}

	// The cache is the server's to write: a log line that is no name npm
	// would write is not repeated.
	hostile := strings.ReplaceAll(puppeteerLog, "puppeteer@24.1.0", "x\u202e@1")
	if s := scriptOf([]byte(hostile)); s.Text != "" {
		t.Errorf("a hostile log gave %q", s.Text)
	}
}
