package lock

import (
	"fmt"
	"slices"

	"github.com/tailscale/hujson"

	"github.com/mcpsandbox/mcpsandbox/contract"
)

// fromForm turns a checked lock into a File, checking each entry against
// its text; root places what is wrong.
func (c *checker) fromForm(root *hujson.Value, form *fileJSON) (*File, error) {
	f := New()
	servers := member(root, "servers")
	ids := make([]string, 0, len(form.Servers))
	for id := range form.Servers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		sj := form.Servers[id]
		node := member(&servers.Value, id)
		if sj == nil {
			return nil, c.fail(node.Value.StartOffset, fmt.Sprintf("servers[%q] is null", id), restoreFix)
		}
		s := &Server{Name: sj.Name, Mode: sj.Mode}
		if p := sj.Package; p != nil {
			s.Package = &Package{Name: p.Name, Version: p.Version, Integrity: p.Integrity, Registry: p.Registry,
				Published: p.Published, MCPName: p.MCPName, InstallHosts: p.InstallHosts}
			if pv := p.Provenance; pv != nil {
				s.Package.Provenance = &Provenance{pv.Issuer, pv.Repository, pv.Workflow, pv.Commit}
			}
		}
		for _, part := range []struct {
			name string
			from *contractJSON
			to   *Contract
		}{{"contract", sj.Contract, &s.Contract}, {"pending", sj.Pending, &s.Pending}} {
			if err := c.contract(node, fmt.Sprintf("servers[%q].%s", id, part.name), part.name, part.from, part.to); err != nil {
				return nil, err
			}
		}
		f.Servers[id] = s
	}
	if err := c.approvals(root, form.Approvals); err != nil {
		return nil, err
	}
	f.Approvals = form.Approvals
	return f, nil
}

// keyedMembers names the lock's member for each keyed kind.
var keyedMembers = []struct {
	kind   contract.Kind
	member string
}{{contract.Tool, "tools"}, {contract.Prompt, "prompts"}, {contract.Resource, "resources"}, {contract.ResourceTemplate, "resourceTemplates"}}

func (cj *contractJSON) keyed(kind contract.Kind) map[string]*entryJSON {
	switch kind {
	case contract.Tool:
		return cj.Tools
	case contract.Prompt:
		return cj.Prompts
	case contract.Resource:
		return cj.Resources
	}
	return cj.ResourceTemplates
}

func (cj *contractJSON) single(kind contract.Kind) *entryJSON {
	switch kind {
	case contract.Instructions:
		return cj.Instructions
	case contract.ServerInfo:
		return cj.ServerInfo
	}
	return cj.Capabilities
}

// contract checks and pins every entry of cj into to; server is the
// server's node, name the member ("contract" or "pending").
func (c *checker) contract(server *hujson.ObjectMember, path, name string, cj *contractJSON, to *Contract) error {
	if cj == nil {
		return nil
	}
	node := member(&server.Value, name)
	for _, k := range keyedMembers {
		entries := cj.keyed(k.kind)
		keys := make([]string, 0, len(entries))
		for key := range entries {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		for _, key := range keys {
			m := member(&member(&node.Value, k.member).Value, key)
			if err := c.entry(m, fmt.Sprintf("%s.%s[%q]", path, k.member, key), k.kind, key, entries[key], to); err != nil {
				return err
			}
		}
	}
	for _, kind := range []contract.Kind{contract.Instructions, contract.ServerInfo, contract.Capabilities} {
		if ej := cj.single(kind); ej != nil {
			if err := c.entry(member(&node.Value, string(kind)), path+"."+string(kind), kind, "", ej, to); err != nil {
				return err
			}
		}
	}
	return nil
}

// entry checks that an entry's text is an item of its kind whose key is the
// entry's, and that its hash is the text's, then pins it.
func (c *checker) entry(m *hujson.ObjectMember, path string, kind contract.Kind, key string, ej *entryJSON, to *Contract) error {
	text, hash := member(&m.Value, "text"), member(&m.Value, "hash")
	switch {
	case text == nil:
		return c.fail(m.Value.StartOffset, path+" has no text", restoreFix)
	case hash == nil:
		return c.fail(m.Value.StartOffset, path+" has no hash", restoreFix)
	}
	it, err := contract.NewItem(kind, key, ej.Text)
	if err != nil {
		if kind.Keyed() {
			if named, err2 := contract.KeyOf(kind, ej.Text); err2 == nil && named != key {
				return c.fail(m.Name.StartOffset, fmt.Sprintf("%s: the key %q does not match its text, which names %q", path, key, named),
					restoreFix+" (a key and its text are renamed together, never one alone)")
			}
		}
		return c.fail(text.Value.StartOffset, fmt.Sprintf("%s.text is no %s: %v", path, kind, err), restoreFix)
	}
	if it.Hash != ej.Hash {
		return c.fail(hash.Value.StartOffset, fmt.Sprintf("%s.hash %s does not match its text, which hashes to %s", path, ej.Hash, it.Hash),
			restoreFix+" (an approved text is changed by mcpsandbox pins approve, never by hand)")
	}
	to.Put(it, Entry{Reason: ej.Reason, Findings: ej.Findings, Seen: ej.Seen})
	return nil
}
