package sandbox

import (
	"io"
	"log/slog"
	"strings"
	"testing"
)

// An unconfined server gets the environment its caller passes in, never
// the supervisor's own, and its program is found on that environment's
// PATH.
func TestUnconfinedInheritsOnlyWhatIsPassed(t *testing.T) {
	t.Setenv("MCPSANDBOX_TEST_SUPERVISORS_OWN", "leaked")
	spec := Spec{Name: "env", Args: []string{"sh", "-c", "env"}, Unconfined: true,
		Inherit: []string{"PATH=/usr/bin:/bin", "PASSED_IN=yes"}, Env: []string{"FROM_POLICY=1"}}
	p, err := Start(spec, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Stdin().Close()
	out, _ := io.ReadAll(p.Stdout())
	<-p.Done()
	env := string(out)
	for _, want := range []string{"PASSED_IN=yes", "FROM_POLICY=1"} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("environment lacks %s:\n%s", want, env)
		}
	}
	if strings.Contains(env, "MCPSANDBOX_TEST_SUPERVISORS_OWN") {
		t.Errorf("the supervisor's own variable reached the server:\n%s", env)
	}

	spec.Inherit = []string{"PATH=/nonexistent"}
	if _, err := Start(spec, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), `"sh"`) {
		t.Errorf("sh not on the passed PATH: Start got %v, want it not found", err)
	}
}
