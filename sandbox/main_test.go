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
	os.Exit(m.Run())
}
