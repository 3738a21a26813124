package sandbox

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestMain lets this test binary act as the init and exec stages of the
// sandboxes its tests start, and as the probe server they run.
func TestMain(m *testing.M) {
	InitStage()
	if os.Getenv(sbxProbeEnv) != "" {
		os.Exit(runSbxProbe())
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
	omitUnbuiltParts()
	os.Exit(m.Run())
}

// omitUnbuiltParts leaves seccomp or cgroups out of the sandboxes these tests
// start while those parts are still placeholders, so the rest can be tested;
// the tests log it. Real failures of built parts are never omitted.
func omitUnbuiltParts() {
	if _, err := compileSeccomp("default", false, false); err != nil && strings.Contains(err.Error(), "not built yet") {
		omitForTests.seccomp = err.Error()
	}
	if cg, err := newServerCgroup("omit-probe", cgroupLimits{}); err != nil && strings.Contains(err.Error(), "not built yet") {
		omitForTests.cgroup = err.Error()
	} else if err == nil {
		cg.Delete()
	}
}
