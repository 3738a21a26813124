package initstage

import (
	"os"
	"strings"
	"testing"
)

// Landlock rules without the ruleset to add them to stop the start: a
// kernel that has Landlock must get it, never a server without it.
func TestInitStageLandlockRulesNeedTheRuleset(t *testing.T) {
	cfg := testConfig(t, "/bin/true")
	cfg.Landlock = &Landlock{RootAccess: 1 << 13, PrivateAccess: 1<<9 | 1<<10, Places: []string{"/tmp"}}
	out, rep := runInitStage(t, cfg)
	if rep.Exited || !strings.Contains(rep.Error, "Landlock: adding the rule for /: landlock_add_rule: ") ||
		!strings.Contains(rep.Error, "(no ruleset was handed to the init stage)") {
		t.Fatalf("report %+v (output %q), want the missing ruleset named", rep, out)
	}
}

func TestInitStageRefusesAShortLandlockRecord(t *testing.T) {
	rep := initStageReport(t, func(w *os.File) {
		m, err := testConfig(t, "/bin/true").Encode()
		if err != nil {
			t.Fatal(err)
		}
		m.add(cfgLandlock, make([]byte, 15)) // two uint64 are 16 bytes
		m.Send(w)
	})
	if !strings.Contains(rep.Error, "reading the sandbox configuration: malformed record") {
		t.Errorf("report %q, want a malformed record", rep.Error)
	}
}

func TestConfigMessageRefusesNULInLandlockPlaces(t *testing.T) {
	cfg := testConfig(t, "/bin/true")
	cfg.Landlock = &Landlock{PrivateAccess: 1 << 10, Places: []string{"/tmp\x00/etc"}}
	if _, err := cfg.Encode(); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("Encode: %v, want a NUL error", err)
	}
}
