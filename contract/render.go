package contract

import (
	"fmt"
	"io"
)

// Render writes changes as a user reads them: one heading per item, its
// semantic lines, then a line diff of its changed text fields (description,
// instructions).
func Render(w io.Writer, changes []Change) {
	for _, c := range changes {
		fmt.Fprintf(w, "%s %s\n", c.Name(), c.Op)
		for _, d := range c.Details {
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
}
