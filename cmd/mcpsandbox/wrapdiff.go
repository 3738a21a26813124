package main

import (
	"fmt"
	"io"
	"strings"
)

// diffContext is the unchanged lines a hunk shows around a change, as diff -u.
const diffContext = 3

// writeDiff writes the unified diff of a file's contents before and after
// (an empty before: a file to be made).
func writeDiff(w io.Writer, path string, before, after []byte) {
	a, b := splitLines(string(before)), splitLines(string(after))
	ops := diffLines(a, b)
	from := path
	if len(before) == 0 {
		from = "/dev/null"
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", from, path)
	// Hunks: runs of changes with up to diffContext lines around them.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-diffContext)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(len(ops), end+diffContext)
				break
			}
			end = run
		}
		aStart, bStart, aLen, bLen := ops[start].a, ops[start].b, 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aLen++
			}
			if op.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, op := range ops[start:end] {
			line := op.line
			if !strings.HasSuffix(line, "\n") {
				line += "\n\\ No newline at end of file\n"
			}
			fmt.Fprintf(w, "%c%s", op.kind, line)
		}
		i = end
	}
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines keeps each line's break, so a changed line break shows.
func splitLines(s string) []string {
	var lines []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines, s = append(lines, s[:i+1]), s[i+1:]
	}
	return lines
}

type diffOp struct {
	kind byte // ' ', '-' or '+'
	line string
	a, b int // the line's index in before and after (or where it would be)
}

// diffLines is a longest common subsequence diff: configuration files are
// small, and the table is their lengths' product.
func diffLines(a, b []string) []diffOp {
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
	var ops []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i, j})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] > lcs[i+1][j]):
			ops = append(ops, diffOp{'+', b[j], i, j})
			j++
		default:
			ops = append(ops, diffOp{'-', a[i], i, j})
			i++
		}
	}
	return ops
}
