package policy

// closest returns the name within two edits of bad (and fewer edits than
// bad has letters, so that "x" suggests nothing), "" if none is.
func closest(bad string, names []string) string {
	best, bestDist := "", 3
	for _, n := range names {
		if d := editDistance(bad, n); d < bestDist && d < len(bad) {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is Levenshtein's; a dozen lines, not worth a dependency.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
