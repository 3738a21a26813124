package main

import (
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// policy.FlagOf, by which the demo names settings, names each field as
// run's flag table does.
func TestPolicyFlagOfIsRunsFlag(t *testing.T) {
	for _, rf := range runFlags {
		if got := policy.FlagOf(rf.Field); got != "--"+rf.Name {
			t.Errorf("policy.FlagOf(%q) = %q, run's flag is --%s", rf.Field, got, rf.Name)
		}
	}
}
