// Package linediff is a longest-common-subsequence diff of lines, shared by
// wrap's diff of a host's file and the contract diff of a server's texts.
// It is a leaf so that both can import it without importing each other.
package linediff

// Op is one line of a diff.
type Op struct {
	Kind byte // ' ', '-' or '+'
	Line string
	A, B int // the line's index in a and b (or where it would be)
}

// Lines diffs a and b. The table is their lengths' product: callers bound
// what they give it.
func Lines(a, b []string) []Op {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []Op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, Op{' ', a[i], i, j})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] > lcs[i+1][j]):
			ops = append(ops, Op{'+', b[j], i, j})
			j++
		default:
			ops = append(ops, Op{'-', a[i], i, j})
			i++
		}
	}
	return ops
}
