package policy

import (
	"strconv"

	"github.com/goccy/go-yaml/ast"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// The host lists of a file (network.allow-hosts, network.deny-hosts): each
// item is checked where it is written, and where each entry came from is
// kept per item (Origin.Item), for policy explain.

func isHostList(f string) bool { return f == "AllowHosts" || f == "DenyHosts" }

// Origin entries for hosts the server's arguments were to give.
const (
	// hostsUnknown: an allow-hosts item uses the arguments, which are not
	// known here (policy check), so an empty allow list may not be.
	hostsUnknown = "${ARG}:unknown"
	// hostsNone: the first ${ARG_HOSTS} that found no URL.
	hostsNone = "${ARG_HOSTS}:none"
)

func itemKey(f string, i int) string { return f + "[" + strconv.Itoa(i) + "]" }

// Item is where a policy file has item i of the list field f (only host
// lists keep them); ok is false for an item the caller added.
func (o Origin) Item(f string, i int) (Pos, bool) {
	p, ok := o[itemKey(f, i)]
	return p, ok
}

func (d *decoder) setHosts(k Key, kv *ast.MappingValueNode, list *[]string) error {
	n := unwrap(kv.Value)
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return d.fail(n, &field.Error{Field: k.Field, Problem: "must be a list", Fix: "e.g. [api.example.test, \"*.example.test:8443\"]"})
	}
	for _, item := range seq.Values {
		s, ok := scalarOf(item)
		if !ok || s.kind != "string" {
			return d.fail(item, &field.Error{Field: k.Field, Problem: "items must be strings", Fix: "quote it"})
		}
		specs, unknown, err := d.vars.expandHost(s.text)
		if err != nil {
			return d.fail(item, &field.Error{Field: k.Field, Err: err})
		}
		if k.Field == "AllowHosts" && !unknown && len(specs) == 0 {
			if _, seen := d.origin[hostsNone]; !seen {
				d.origin[hostsNone] = posOf(d.file, item)
			}
		}
		if unknown && k.Field == "AllowHosts" {
			d.origin[hostsUnknown] = posOf(d.file, item)
		}
		for _, spec := range specs {
			if _, err := ParseHostSpec(spec); err != nil {
				return d.fail(item, hostSpecError(k.Field, spec, err))
			}
			d.origin[itemKey(k.Field, len(*list))] = posOf(d.file, item)
			*list = append(*list, spec)
		}
	}
	if k.Field == "AllowHosts" && len(seq.Values) > 0 {
		d.hosts = kv.Key
	}
	d.origin[k.Field] = posOf(d.file, n)
	return nil
}

// selectNet applies this document's say on the network mode (SelectNet):
// its allow-hosts select egress unless it says none or host beside them.
func (d *decoder) selectNet() error {
	selected, err := d.p.SelectNet(d.mode != nil, d.hosts != nil)
	if err != nil {
		return d.fail(d.mode, err.(*field.Error))
	}
	if selected {
		d.origin["Net"] = posOf(d.file, d.hosts)
	}
	return nil
}
