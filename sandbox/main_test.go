package sandbox

import (
	"bufio"
	"os"
	"testing"
)

// TestMain lets this test binary act as the probe server its sandboxes run
// (any binary linking this package can be their init stage: initstage's
// zygote.c).
func TestMain(m *testing.M) {
	if kind := os.Getenv(sbxHoldEnv); kind != "" {
		os.Exit(runSbxHold(kind))
	}
	if os.Getenv(sbxEgressEnv) != "" {
		os.Exit(runSbxEgressProbe())
	}
	if os.Getenv(sbxProbeEnv) != "" {
		os.Exit(runSbxProbe())
	}
	if os.Getenv(sbxCgroupfsEnv) != "" {
		os.Exit(runCgroupfsProbe())
	}
	if os.Getenv(sbxDoctorRoleEnv) != "" {
		os.Exit(sbxDoctorRole())
	}
	if os.Getenv(sbxStartRoleEnv) != "" {
		os.Exit(sbxStartRole())
	}
	if os.Getenv(sbxWaitEnv) != "" {
		// Wait until the parent test has moved us into our cgroups.
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	// The tests' servers are recorded in a registry of their own, not
	// among this host's (user.go).
	if os.Geteuid() == 0 {
		dir, err := os.MkdirTemp("", "mcpsandbox-test-ids-")
		if err != nil {
			panic(err)
		}
		idRegistry = dir + "/ids"
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}
