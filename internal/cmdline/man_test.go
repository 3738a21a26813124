package cmdline

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

var manSample = &Page{
	Name:        "mcpsandbox thing - do a thing",
	Synopsis:    []string{"mcpsandbox thing [--dry-run] FILE"},
	Description: []string{"Runs `mcpsandbox thing` on FILE, ABI 2–5.\n.Not a request, nor \\n an escape.", "  preformatted line\n  .and another"},
	Options:     []Option{{Group: "Files:", Flag: "--dry-run", Text: "Print, do not write."}},
	ExitStatus:  []string{"0 on success."},
	Examples:    []Example{{Command: "mcpsandbox thing ~/x.json", Text: "Try it:"}},
}

func TestManPageKeepsTheTextAndEscapesRoff(t *testing.T) {
	var b bytes.Buffer
	manSample.WriteMan(&b, "mcpsandbox-thing", "2026-12-02", "mcpsandbox 1.0")
	man := b.String()
	for _, want := range []string{
		".TH MCPSANDBOX\\-THING 1 \"2026-12-02\" \"mcpsandbox 1.0\"",
		".SH NAME\nmcpsandbox\\-thing \\- do a thing\n",
		"Runs \\fBmcpsandbox thing\\fR on FILE, ABI 2\\[u2013]5. .Not a request, nor \\en an escape.",
		".nf\n  preformatted line\n  .and another\n.fi",
		".SS Files\n.TP\n.B \\-\\-dry\\-run\nPrint, do not write.",
		".RS\n.nf\nmcpsandbox thing ~/x.json\n.fi",
	} {
		if !strings.Contains(man, want) {
			t.Errorf("no %q in\n%s", want, man)
		}
	}
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("no groff to read the page")
	}
	cmd := exec.Command("groff", "-man", "-Tutf8", "-ww")
	cmd.Stdin = strings.NewReader(man)
	var out, warn bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &warn
	if err := cmd.Run(); err != nil || warn.Len() > 0 {
		t.Errorf("groff: %v %s", err, warn.String())
	}
	// What the reader sees: the text, not the escapes.
	text := strings.Join(strings.Fields(regexpStrip(out.String())), " ")
	for _, want := range []string{"mcpsandbox-thing - do a thing", "ABI 2–5", "nor \\n an", "preformatted line .and another", "--dry-run"} {
		if !strings.Contains(text, want) {
			t.Errorf("the rendered page has no %q:\n%s", want, text)
		}
	}
}

// regexpStrip drops groff's overstrike bold and underline (c\bc, _\bc).
func regexpStrip(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i := 0; i < len(r); i++ {
		if i+1 < len(r) && r[i+1] == '\b' {
			i++
			continue
		}
		b.WriteRune(r[i])
	}
	return strings.ReplaceAll(b.String(), "\u2010", "-")
}
