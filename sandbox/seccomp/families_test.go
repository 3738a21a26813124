package seccomp

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A family the built-in profile has no rule for is refused, not silently
// dropped or allowed.
func TestSeccompRefusesOtherFamilies(t *testing.T) {
	packet := AFUnix | 1<<unix.AF_PACKET
	for name, build := range map[string]func() ([]byte, error){
		"Compile": func() ([]byte, error) { return Compile("default", packet, false) },
		"Program": func() ([]byte, error) { return Program("default", packet, false) },
	} {
		if _, err := build(); err == nil || !strings.Contains(err.Error(), "af17") || !strings.Contains(err.Error(), "only unix, inet and inet6") {
			t.Errorf("%s with AF_PACKET: %v, want a refusal naming af17 and what is allowed", name, err)
		}
	}
	if got := (AFUnix | AFInet | AFInet6).String(); got != "unix+inet+inet6" {
		t.Errorf("String() = %q", got)
	}
}
