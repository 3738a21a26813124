package cmdline

import (
	"fmt"
	"io"
	"strings"
)

// Page is the --help text of one command, laid out like a man page.
type Page struct {
	Name        string // "mcpsandbox run - one line summary"
	Synopsis    []string
	Description []string // paragraphs
	Options     []Option
	ExitStatus  []string // paragraphs
	Examples    []Example
}

type Option struct {
	Group string // heading printed before the first option of a group
	Flag  string // "--memory SIZE"
	Text  string
}

type Example struct {
	Command string
	Text    string
}

// Width is the widest line a page prints, but for example commands.
const Width = 78

func (m *Page) Write(w io.Writer) {
	section := func(title string) { fmt.Fprintf(w, "%s\n", title) }
	section("NAME")
	fmt.Fprintf(w, "    %s\n\n", m.Name)
	section("SYNOPSIS")
	for _, s := range m.Synopsis {
		fmt.Fprintf(w, "    %s\n", s)
	}
	fmt.Fprintln(w)
	section("DESCRIPTION")
	writeParagraphs(w, m.Description, 4)
	section("OPTIONS")
	if len(m.Options) == 0 {
		fmt.Fprintf(w, "    --help, -h\n        Print this page.\n\n")
	}
	group := ""
	for _, o := range m.Options {
		if o.Group != "" && o.Group != group {
			group = o.Group
			fmt.Fprintf(w, "  %s\n", group)
		}
		fmt.Fprintf(w, "    %s\n", o.Flag)
		writeParagraphs(w, []string{o.Text}, 8)
	}
	section("EXIT STATUS")
	writeParagraphs(w, m.ExitStatus, 4)
	section("EXAMPLES")
	for _, e := range m.Examples {
		writeParagraphs(w, []string{e.Text}, 4)
		fmt.Fprintf(w, "        %s\n\n", e.Command)
	}
}

// Summary is the part of the page's NAME after the dash.
func (m *Page) Summary() string {
	if _, after, ok := strings.Cut(m.Name, " - "); ok {
		return after
	}
	return m.Name
}

// writeParagraphs wraps each paragraph at Width. A paragraph whose lines
// start with a space is preformatted and printed as it is.
func writeParagraphs(w io.Writer, paras []string, indent int) {
	pad := strings.Repeat(" ", indent)
	for _, p := range paras {
		if strings.HasPrefix(p, " ") {
			for _, line := range strings.Split(p, "\n") {
				fmt.Fprintf(w, "%s%s\n", pad, line)
			}
			fmt.Fprintln(w)
			continue
		}
		line := pad
		for _, word := range strings.Fields(p) {
			if len(line) > indent && len(line)+1+len(word) > Width {
				fmt.Fprintln(w, line)
				line = pad
			}
			if len(line) > indent {
				line += " "
			}
			line += word
		}
		fmt.Fprintf(w, "%s\n\n", line)
	}
}
