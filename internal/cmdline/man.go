package cmdline

import (
	"fmt"
	"io"
	"strings"
)

// WriteMan writes the page as a man(7) page of section 1, for the .deb and
// .rpm: the same text as Write, laid out by the reader's man.
func (m *Page) WriteMan(w io.Writer, name, date, source string) {
	fmt.Fprintf(w, ".TH %s 1 %q %q \"User Commands\"\n", strings.ToUpper(roff(name)), date, source)
	fmt.Fprintf(w, ".SH NAME\n%s \\- %s\n", roff(name), roffText(m.Summary()))
	fmt.Fprintf(w, ".SH SYNOPSIS\n.nf\n")
	for _, s := range m.Synopsis {
		fmt.Fprintf(w, "%s\n", roffLine(s))
	}
	fmt.Fprintf(w, ".fi\n.SH DESCRIPTION\n")
	manParagraphs(w, m.Description)
	fmt.Fprintf(w, ".SH OPTIONS\n")
	options := m.Options
	if len(options) == 0 {
		options = []Option{{Flag: "--help, -h", Text: "Print this page."}}
	}
	group := ""
	for _, o := range options {
		if o.Group != "" && o.Group != group {
			group = o.Group
			fmt.Fprintf(w, ".SS %s\n", roffText(strings.TrimSuffix(group, ":")))
		}
		fmt.Fprintf(w, ".TP\n.B %s\n%s\n", roffText(o.Flag), roffText(o.Text))
	}
	fmt.Fprintf(w, ".SH \"EXIT STATUS\"\n")
	manParagraphs(w, m.ExitStatus)
	if len(m.Examples) > 0 {
		fmt.Fprintf(w, ".SH EXAMPLES\n")
		for _, e := range m.Examples {
			fmt.Fprintf(w, ".PP\n%s\n.RS\n.nf\n%s\n.fi\n.RE\n", roffText(e.Text), roffLine(e.Command))
		}
	}
}

// manParagraphs: a paragraph whose lines start with a space is
// preformatted, as for Write.
func manParagraphs(w io.Writer, paras []string) {
	for _, p := range paras {
		if strings.HasPrefix(p, " ") {
			fmt.Fprintf(w, ".PP\n.nf\n")
			for _, line := range strings.Split(p, "\n") {
				fmt.Fprintf(w, "%s\n", roffLine(line))
			}
			fmt.Fprintf(w, ".fi\n")
			continue
		}
		fmt.Fprintf(w, ".PP\n%s\n", roffText(p))
	}
}

// roffText is running text: `code` in bold.
func roffText(s string) string {
	parts := strings.Split(strings.Join(strings.Fields(s), " "), "`")
	for i := range parts {
		parts[i] = roff(parts[i])
		if i%2 == 1 && i < len(parts)-1 {
			parts[i] = `\fB` + parts[i] + `\fR`
		} else if i%2 == 1 {
			parts[i] = "`" + parts[i] // an unpaired backtick stays one
		}
	}
	return startSafe(strings.Join(parts, ""))
}

// roffLine is a line printed as it is.
func roffLine(s string) string { return startSafe(roff(s)) }

// roff escapes what roff would read as an escape or a minus sign, and
// writes a character beyond ASCII by its code (troff reads bytes as Latin-1).
func roff(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > 127:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// startSafe keeps a line's leading . or ' from being read as a request.
func startSafe(s string) string {
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		return `\&` + s
	}
	return s
}
