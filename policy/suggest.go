package policy

import "github.com/mcpsandbox/mcpsandbox/internal/field"

// closest returns the name within two edits of bad (and fewer edits than
// bad has letters, so that "x" suggests nothing), "" if none is.
func closest(bad string, names []string) string {
	best, bestDist := "", 3
	for _, n := range names {
		if d := field.EditDistance(bad, n); d < bestDist && d < len(bad) {
			best, bestDist = n, d
		}
	}
	return best
}
