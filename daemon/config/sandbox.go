package config

import (
	"os"
	"slices"
	"strconv"

	"github.com/goccy/go-yaml/ast"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// VS Code's sandbox settings (sandboxEnabled, and a sandbox object on the
// entry or at the top of the file, for every sandboxed server of it):
//
//	filesystem.allowWrite      the only host paths the server may write
//	filesystem.denyWrite       paths within those it may not
//	filesystem.denyRead        paths it may not read (it reads anything else)
//	network.allowedDomains     the only hosts it may reach (*.example.com: those below it)
//	network.deniedDomains      hosts it may not, whatever allows them
//
// VS Code also lets a sandboxed server write its working directory and
// ~/.npm, and reach registry.npmjs.org. mcpsandbox starts from less: the
// server reads nothing of the host but the system and its grants. So
// allowWrite items are read-write grants (filesystem.rw), a denyWrite
// within one a read-only grant over it (filesystem.ro), allowedDomains
// network.allow-hosts (egress; a name without a port: 443 and 80) and
// deniedDomains network.deny-hosts. What the base policy grants beyond
// them is taken back when the server is resolved (Server.Narrow): a
// writable grant outside allowWrite (and those two VS Code defaults) is
// made read-only, a host outside allowedDomains dropped, a grant within a
// denyWrite made read-only. A denyRead within or around a grant cannot be
// honoured (a grant shows all of its directory), nor one in the system
// directories every sandbox shows, and is refused.

const (
	keyFilesystem = "filesystem"
	keyNetwork    = "network"
)

var (
	sandboxKeys    = []string{keyFilesystem, keyNetwork}
	filesystemKeys = []string{"allowWrite", "denyWrite", "denyRead"}
	networkKeys    = []string{"allowedDomains", "deniedDomains"}
)

// What VS Code lets every sandboxed server do beyond its settings.
var (
	vscodeWritable  = []string{"~/.npm"} // and its working directory
	vscodeReachable = []string{"registry.npmjs.org"}
)

// systemShown are the host paths every sandbox shows its server
// read-only, which a denyRead cannot take away: /usr and the directories
// merged-/usr hosts link into it, the sandbox's own /proc, /sys and /dev,
// and what of the host's /etc it copies or binds (initstage's
// etc_copied, etc_linked and etc_dirs; resolv.conf and hosts with
// network mode host).
var systemShown = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sys", "/dev",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf",
	"/etc/timezone", "/etc/localtime", "/etc/os-release", "/etc/ssl", "/etc/pki", "/etc/ca-certificates", "/etc/alternatives",
	"/etc/resolv.conf", "/etc/hosts"}

// sandbox applies the entry's VS Code sandbox settings.
func (e *entry) sandbox(root ast.Node) error {
	enabled := false
	at := e.keys[keyEnabled]
	if at != nil {
		b, ok := unwrap(at.Value).(*ast.BoolNode)
		if !ok {
			return e.fail(at.Value, "sandboxEnabled must be true or false, not "+kind(at.Value), "")
		}
		enabled = b.Value
	}
	own := e.keys[keySandbox]
	if own != nil && isNull(own.Value) {
		own = nil
	}
	if !enabled {
		if own != nil {
			return e.fail(own.Key, "sandbox is in force only with \"sandboxEnabled\": true (VS Code ignores it otherwise)",
				"set \"sandboxEnabled\": true, or delete sandbox; mcpsandbox confines the server either way")
		}
		return nil
	}
	lim := &e.s.Limits
	lim.Sandboxed, lim.At = true, posOf(e.file, at.Key)
	for _, n := range []ast.Node{root, valueOf(own)} {
		if n != nil && !isNull(n) {
			if err := e.sandboxObject(n); err != nil {
				return err
			}
		}
	}
	implied := append(slices.Clone(vscodeWritable), e.workDir())
	for _, p := range implied {
		path, err := e.path(at.Key, p, e.workDir())
		if err == nil && !slices.ContainsFunc(lim.Writable, func(w Item) bool { return w.Value == path }) {
			lim.Writable = append(lim.Writable, Item{path, lim.At})
		}
	}
	for _, h := range vscodeReachable {
		lim.Reachable = append(lim.Reachable, Item{h, lim.At})
	}
	return e.checkSandbox()
}

func valueOf(kv *ast.MappingValueNode) ast.Node {
	if kv == nil {
		return nil
	}
	return kv.Value
}

// sandboxObject reads one sandbox object.
func (e *entry) sandboxObject(n ast.Node) error {
	list, ok := entries(n)
	if !ok {
		return e.fail(n, "sandbox must be an object, not "+kind(n), `e.g. "sandbox": {"filesystem": {"allowWrite": ["${workspaceFolder}"]}, "network": {"allowedDomains": ["api.example.com"]}}`)
	}
	for _, sec := range list {
		name := keyName(sec)
		keys := map[string][]string{keyFilesystem: filesystemKeys, keyNetwork: networkKeys}[name]
		if keys == nil {
			return e.fail(sec.Key, "unknown key "+strconv.Quote(name)+" in sandbox", suggest(name, sandboxKeys, "sandbox"))
		}
		settings, ok := entries(sec.Value)
		if !ok {
			return e.fail(sec.Value, "sandbox."+name+" must be an object, not "+kind(sec.Value), "its keys are "+joinKeys(keys))
		}
		for _, kv := range settings {
			key := keyName(kv)
			if !slices.Contains(keys, key) {
				return e.fail(kv.Key, "unknown key "+strconv.Quote(key)+" in sandbox."+name+": mcpsandbox maps only VS Code's sandbox settings",
					suggest(key, keys, "sandbox."+name))
			}
			if err := e.sandboxList(name+"."+key, kv); err != nil {
				return err
			}
		}
	}
	return nil
}

func joinKeys(keys []string) string {
	out := ""
	for i, k := range keys {
		if i > 0 {
			out += ", "
		}
		out += k
	}
	return out
}

// sandboxList maps one list of settings.
func (e *entry) sandboxList(key string, kv *ast.MappingValueNode) error {
	if isNull(kv.Value) {
		return nil
	}
	seq, ok := unwrap(kv.Value).(*ast.SequenceNode)
	if !ok {
		return e.fail(kv.Value, "sandbox."+key+" must be a list of strings, not "+kind(kv.Value), `e.g. ["${workspaceFolder}/out"]`)
	}
	lim := &e.s.Limits
	for _, item := range seq.Values {
		s, ok := str(item)
		if !ok {
			return e.fail(item, "sandbox."+key+" items must be strings, not "+kind(item), "quote it")
		}
		pos := posOf(e.file, item)
		switch key {
		case "network.allowedDomains", "network.deniedDomains":
			if _, err := policy.ParseHostSpec(s); err != nil {
				return placed(e.file, item, &field.Error{Value: strconv.Quote(s), Problem: "sandbox." + key + ": is no host: " + err.Error(), Fix: policy.HostSpecForms})
			}
			if key == "network.allowedDomains" {
				e.o.p.AllowHosts = append(e.o.p.AllowHosts, s)
				e.o.set("AllowHosts", pos)
				lim.Reachable = append(lim.Reachable, Item{s, pos})
			} else {
				e.o.p.DenyHosts = append(e.o.p.DenyHosts, s)
				e.o.set("DenyHosts", pos)
			}
			continue
		}
		path, err := e.path(item, s, e.workDir())
		if err != nil {
			return err
		}
		switch key {
		case "filesystem.allowWrite":
			e.o.p.ReadWrite = append(e.o.p.ReadWrite, path)
			e.o.set("ReadWrite", pos)
			lim.Writable = append(lim.Writable, Item{path, pos})
		case "filesystem.denyWrite":
			lim.DenyWrite = append(lim.DenyWrite, Item{path, pos})
		case "filesystem.denyRead":
			for _, sys := range systemShown {
				if pathrule.Within(path, sys) || pathrule.Within(sys, path) {
					return e.fail(item, "sandbox.filesystem.denyRead "+path+": every sandbox shows its server "+sys+" (the system it runs on, read-only)",
						"delete this item: the server sees nothing else of the host's files that is not granted")
				}
			}
			lim.DenyRead = append(lim.DenyRead, Item{path, pos})
		}
	}
	return nil
}

// checkSandbox settles the settings with the entry's own grants and
// network: a denyWrite within a grant of allowWrite becomes a read-only
// grant, a denyRead within or around a grant is refused, as is a network
// mode or an unconfined policy the sandbox contradicts.
func (e *entry) checkSandbox() error {
	lim := &e.s.Limits
	for _, d := range lim.DenyWrite {
		if ro, rw := readOnlyWithin(d.Value, e.o.p.ReadOnly, e.o.p.ReadWrite); len(rw) < len(e.o.p.ReadWrite) {
			e.o.p.ReadOnly, e.o.p.ReadWrite = ro, rw // denyWrite wins over allowWrite
			e.o.set("ReadOnly", d.Pos)
		}
		if !slices.ContainsFunc(e.o.p.ReadWrite, func(g string) bool { return pathrule.Within(d.Value, g) }) || slices.Contains(e.o.p.ReadOnly, d.Value) {
			continue
		}
		if _, err := os.Lstat(d.Value); err != nil {
			return &policy.FileError{Pos: d.Pos, Err: &field.Error{
				Problem: "sandbox.filesystem.denyWrite " + d.Value + " does not exist: mcpsandbox keeps a path within allowWrite from writes with a read-only grant of it, which must exist",
				Fix:     "create it (an empty file or directory will do), or drop the item"}}
		}
		e.o.p.ReadOnly = append(e.o.p.ReadOnly, d.Value)
		e.o.set("ReadOnly", d.Pos)
	}
	if err := lim.checkGrants(e.o.p); err != nil {
		return err
	}
	if e.o.given["Unconfined"] && e.o.p.Unconfined {
		return &policy.FileError{Pos: e.o.origin["Unconfined"], Err: &field.Error{Problem: "unconfined: true runs the server without the sandbox that sandboxEnabled asks for", Fix: "delete one of them"}}
	}
	if e.o.given["Net"] {
		if e.o.p.Net == policy.NetHost {
			return &policy.FileError{Pos: e.o.origin["Net"], Err: &field.Error{Problem: "network.mode host reaches every host, but sandboxEnabled allows only sandbox.network.allowedDomains",
				Fix: "delete network.mode, and list the hosts in allowedDomains"}}
		}
		if e.o.p.Net == policy.NetNone && len(e.o.p.AllowHosts) > 0 {
			return &policy.FileError{Pos: e.o.origin["Net"], Err: &field.Error{Problem: "network.mode none contradicts sandbox.network.allowedDomains, which gives the server those hosts",
				Fix: "delete network.mode to reach them, or allowedDomains for no network"}}
		}
	}
	return nil
}
