package demo

import "testing"

func TestCgroupLimitsReadLikeThePolicy(t *testing.T) {
	for _, c := range []struct {
		l    CgroupLimits
		want string
	}{
		{CgroupLimits{Memory: "1073741824", Pids: "256", CPU: "max 100000", Files: []string{"x"}}, "memory 1GiB, pids 256, cpu no limit"},
		{CgroupLimits{Memory: "max", Pids: "max", CPU: "50000 100000", Files: []string{"x"}}, "memory no limit, pids no limit, cpu 0.5 cores"},
		{CgroupLimits{Memory: "268435456", Pids: "64", Files: []string{"x"}}, "memory 256MiB, pids 64, cpu no limit"},
		{CgroupLimits{}, "none visible"},
	} {
		if got := c.l.String(); got != c.want {
			t.Errorf("%+v reads %q, want %q", c.l, got, c.want)
		}
	}
}
