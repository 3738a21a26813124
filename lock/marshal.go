package lock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpsandbox/mcpsandbox/contract"
)

// Marshal is the lock's file form: servers and items sorted, 2-space indent,
// each item's text as JSON, a trailing newline. Characters a reader cannot
// see (zero-width, bidi and tag characters, controls) are written as \u
// escapes, so a review of the file's diff shows them.
func (f *File) Marshal() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f.form()); err != nil {
		// Every value in the form is a string, a number, a time or text that
		// was canonical JSON when it was put there.
		panic(fmt.Sprintf("lock: cannot encode: %v", err))
	}
	return escapeInvisible(buf.Bytes())
}

func (f *File) form() *fileJSON {
	out := &fileJSON{Version: f.Version, Servers: map[string]*serverJSON{}, Approvals: f.Approvals}
	if out.Version == 0 {
		out.Version = Version
	}
	for id, s := range f.Servers {
		if s == nil {
			continue
		}
		sj := &serverJSON{Name: s.Name, Mode: s.Mode, Contract: s.Contract.form(), Pending: s.Pending.form()}
		if p := s.Package; p != nil {
			sj.Package = &packageJSON{Name: p.Name, Version: p.Version, Integrity: p.Integrity, Registry: p.Registry,
				Published: p.Published, MCPName: p.MCPName, InstallHosts: p.InstallHosts}
			if pv := p.Provenance; pv != nil {
				sj.Package.Provenance = &provenanceJSON{pv.Issuer, pv.Repository, pv.Workflow, pv.Commit}
			}
		}
		out.Servers[id] = sj
	}
	return out
}

func (c *Contract) form() *contractJSON {
	if c.Empty() {
		return nil
	}
	keyed := func(m map[string]Entry) map[string]*entryJSON {
		if len(m) == 0 {
			return nil
		}
		out := make(map[string]*entryJSON, len(m))
		for k, e := range m {
			out[k] = e.form()
		}
		return out
	}
	single := func(e *Entry) *entryJSON {
		if e == nil {
			return nil
		}
		return e.form()
	}
	return &contractJSON{Tools: keyed(c.Tools), Prompts: keyed(c.Prompts), Resources: keyed(c.Resources),
		ResourceTemplates: keyed(c.ResourceTemplates), Instructions: single(c.Instructions),
		ServerInfo: single(c.ServerInfo), Capabilities: single(c.Capabilities)}
}

func (e Entry) form() *entryJSON {
	return &entryJSON{Hash: e.Hash, Reason: e.Reason, Findings: e.Findings, Seen: e.Seen, Text: e.Text}
}

// escapeInvisible writes every rune of b that is not graphic or is a format
// character (Cf: zero-width, bidi, tags) as a JSON \u escape. Outside
// strings the encoder writes only ASCII, so only strings are touched.
func escapeInvisible(b []byte) []byte {
	var out bytes.Buffer
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r < utf8.RuneSelf || !contract.Invisible(r) {
			out.Write(b[i : i+n])
		} else if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, `\u%04x\u%04x`, r1, r2)
		} else {
			fmt.Fprintf(&out, `\u%04x`, r)
		}
		i += n
	}
	return out.Bytes()
}
