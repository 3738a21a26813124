package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/linediff"
)

// diffContext is the unchanged lines a hunk shows around a change, as diff -u.
const diffContext = 3

// writeDiff writes the unified diff of a file's contents before and after
// (an empty before: a file to be made).
func writeDiff(w io.Writer, path string, before, after []byte) {
	a, b := splitLines(string(before)), splitLines(string(after))
	ops := linediff.Lines(a, b)
	from := path
	if len(before) == 0 {
		from = "/dev/null"
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", from, path)
	// Hunks: runs of changes with up to diffContext lines around them.
	for i := 0; i < len(ops); {
		if ops[i].Kind == ' ' {
			i++
			continue
		}
		start := max(0, i-diffContext)
		end := i
		for end < len(ops) {
			if ops[end].Kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].Kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(len(ops), end+diffContext)
				break
			}
			end = run
		}
		aStart, bStart, aLen, bLen := ops[start].A, ops[start].B, 0, 0
		for _, op := range ops[start:end] {
			if op.Kind != '+' {
				aLen++
			}
			if op.Kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, op := range ops[start:end] {
			line := op.Line
			if !strings.HasSuffix(line, "\n") {
				line += "\n\\ No newline at end of file\n"
			}
			fmt.Fprintf(w, "%c%s", op.Kind, line)
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
