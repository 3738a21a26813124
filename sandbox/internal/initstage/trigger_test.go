package initstage

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// triggerRoleEnv makes the test binary, started as `<bin> run ...`, print
// whether its constructor pre-forked an init stage, and exit.
const triggerRoleEnv = "MCPSANDBOX_INITSTAGE_TRIGGER"

// A role hook in init: it must answer before the testing flags are parsed.
func init() {
	if sub, _ := PreforkTrigger(); os.Getenv(triggerRoleEnv) != "" && len(os.Args) > 1 && os.Args[1] == sub {
		if ZygotePending() {
			os.Stdout.WriteString("preforked")
		}
		os.Exit(0)
	}
}

// The constructor pre-forks for the trigger's subcommand and for none of
// the table's flags, in either spelling; the table's flags stop it only
// before "--".
func TestPreforkTriggerIsWhatTheConstructorActsOn(t *testing.T) {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil || st.Type == unix.CGROUP2_SUPER_MAGIC {
		t.Skip("no init stage is pre-forked on cgroup v2: it must start inside its cgroup (CLONE_INTO_CGROUP)")
	}
	sub, unfit := PreforkTrigger()
	preforks := func(args ...string) bool {
		t.Helper()
		cmd := exec.Command(os.Args[0], append([]string{sub}, args...)...)
		cmd.Env = append(os.Environ(), triggerRoleEnv+"=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %q: %v", sub, args, err)
		}
		return string(out) == "preforked"
	}
	for _, args := range [][]string{
		{"--env", "X", "--", "server"},
		{"--net", "none", "--", "server"},
		{"--", "server", "--unconfined", "--net=host", "-h"},
	} {
		if !preforks(args...) {
			t.Errorf("%s %q: no init stage pre-forked", sub, args)
		}
	}
	for _, f := range unfit {
		spellings := [][]string{{"--" + f}, {"-" + f}}
		if name, value, ok := strings.Cut(f, "="); ok {
			spellings = append(spellings, []string{"--" + name, value})
		}
		for _, s := range spellings {
			if preforks(append(s, "--", "server")...) {
				t.Errorf("%s %q: an init stage was pre-forked, want none (%q is in the table)", sub, s, f)
			}
		}
	}
}
