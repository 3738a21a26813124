package sandbox

import (
	"bufio"
	"os"
	"testing"
)

// TestMain lets this test binary act as the init and exec stages of the
// sandboxes its tests start, and as the probe server they run.
func TestMain(m *testing.M) {
	InitStage()
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
