package lock

import (
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/contract"
)

// fromForm turns a parsed lock into a File, checking each entry against its
// text.
func fromForm(path string, form *fileJSON) (*File, error) {
	if form.Version != Version {
		return nil, fmt.Errorf("%s: version %d is not one this mcpsandbox reads (%d)", path, form.Version, Version)
	}
	f := New()
	for id, sj := range form.Servers {
		if sj == nil {
			return nil, fmt.Errorf("%s: server %q is null", path, id)
		}
		s := &Server{Name: sj.Name, Mode: sj.Mode}
		if p := sj.Package; p != nil {
			s.Package = &Package{Name: p.Name, Version: p.Version, Integrity: p.Integrity, Registry: p.Registry,
				Published: p.Published, MCPName: p.MCPName, InstallHosts: p.InstallHosts}
			if pv := p.Provenance; pv != nil {
				s.Package.Provenance = &Provenance{pv.Issuer, pv.Repository, pv.Workflow, pv.Commit}
			}
		}
		var err error
		if s.Contract, err = sj.Contract.contract(); err != nil {
			return nil, fmt.Errorf("%s: servers[%q].contract: %w", path, id, err)
		}
		if s.Pending, err = sj.Pending.contract(); err != nil {
			return nil, fmt.Errorf("%s: servers[%q].pending: %w", path, id, err)
		}
		f.Servers[id] = s
	}
	return f, nil
}

// entryError is an entry that does not match its text; field is the JSON
// member at fault ("hash", "text", or "" for the entry's key).
type entryError struct {
	kind  contract.Kind
	key   string
	field string
	err   error
}

func (e *entryError) Error() string { return e.err.Error() }

func (cj *contractJSON) contract() (Contract, error) {
	var c Contract
	if cj == nil {
		return c, nil
	}
	keyed := []struct {
		kind contract.Kind
		m    map[string]*entryJSON
	}{{contract.Tool, cj.Tools}, {contract.Prompt, cj.Prompts}, {contract.Resource, cj.Resources}, {contract.ResourceTemplate, cj.ResourceTemplates}}
	for _, k := range keyed {
		for key, ej := range k.m {
			if err := c.putChecked(k.kind, key, ej); err != nil {
				return c, err
			}
		}
	}
	for kind, ej := range map[contract.Kind]*entryJSON{contract.Instructions: cj.Instructions, contract.ServerInfo: cj.ServerInfo, contract.Capabilities: cj.Capabilities} {
		if ej != nil {
			if err := c.putChecked(kind, "", ej); err != nil {
				return c, err
			}
		}
	}
	return c, nil
}

// putChecked pins an entry read from a file after checking that its text is
// a contract item of its kind and key, and that its hash is the text's.
func (c *Contract) putChecked(kind contract.Kind, key string, ej *entryJSON) error {
	name := contract.ItemName(kind, key)
	if ej == nil {
		return &entryError{kind, key, "", fmt.Errorf("%s is null", name)}
	}
	it, err := contract.NewItem(kind, key, ej.Text)
	if err != nil {
		return &entryError{kind, key, "text", fmt.Errorf("%s: %w", name, err)}
	}
	if it.Hash != ej.Hash {
		return &entryError{kind, key, "hash", fmt.Errorf("%s: hash %s does not match its text, which hashes to %s", name, ej.Hash, it.Hash)}
	}
	c.Put(it, Entry{Reason: ej.Reason, Findings: ej.Findings, Seen: ej.Seen})
	return nil
}
