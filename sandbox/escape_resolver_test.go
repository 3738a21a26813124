package sandbox

import (
	"strings"
	"testing"
)

// The escape table again under NetNone with the supervisor's resolver, the
// default a server runs with: every row stays blocked but socket_inet,
// where the UDP socket a DNS query needs gets through, and nothing else of
// IP does.
func escapeResolverTable(t *testing.T, hostile string) {
	c := newGrantedEscapeCanaries(t, hostile)
	e := &escapeEgress{c: c}
	t.Cleanup(func() {
		for _, l := range e.served {
			l.close()
		}
	})
	spec := escapeSpec(hostile, []string{c.roDir, c.setIDDir}, []string{c.rwDir})
	spec.Resolver = e.serve
	report := escapeRun(t, spec, c.args)
	for _, row := range escapeChecks {
		t.Run(row.class, func(t *testing.T) {
			r, ok := report[row.class]
			if !ok {
				t.Fatalf("the hostile server did not report %s", row.class)
			}
			if row.class == "socket_inet" {
				for _, note := range strings.Split(r.Detail, "; ") {
					if strings.HasPrefix(note, "ESCAPED: ") && note != "ESCAPED: socket(AF_INET, SOCK_DGRAM) succeeded" {
						t.Errorf("more than the resolver's UDP socket got through: %s", note)
					}
				}
				t.Logf("open for the resolver's queries: %s", r.Detail)
				return
			}
			if !r.Blocked {
				t.Errorf("NOT BLOCKED: %s", r.Detail)
			}
			if row.host != nil {
				row.host(c, t)
			}
		})
	}
}
