package sandbox

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
)

// A root supervisor gives each server a uid of its own, and that uid is the
// server's identity on the host: it owns the files the server leaves in
// grants that are not idmapped (and in any state it keeps). So the uid is
// derived from what the server is and what it can reach, never from a label
// such as the command's basename, which every `npx …` or `node
// dist/index.js` server shares:
//
//   - the resolved executable and the whole argv,
//   - the working directory,
//   - the grants (ReadOnly and ReadWrite, in any order) and the StateDir,
//     which is what keeps the uid's files (counted apart from ReadWrite and
//     only when set, so that identities without one keep their keys),
//   - the network (Net): its mode alone, so NetEgress keys apart from
//     none and host but not by what it captures (Capture), which follows
//     the allowed hosts: a changed allowlist keeps the server's uid,
//   - the environment as the server sees it (names and values),
//   - the seccomp profile as named ("default" or the file's path) and
//     whether it only logs.
//
// A server with a StateDir is the server of that directory, and its key is
// the directory alone: its uid must keep owning its state when its grants,
// network, environment or version change, and the step that fills a
// package cache in it (with the network, another command) must write as
// the same uid. The directory is named per server, as systemd's
// StateDirectory= is per unit.
//
// Two servers that differ in any of these get different uids; the same
// server started again (a restart, a reboot) gets the same one. What only
// bounds how much it may use does not count: TmpSize, NoFile, Memory, Pids
// and CPU, nor the Tmpfs paths, which start empty each time, so that raising a memory limit does not cost a server its own
// files; nor does the Name label. Nor does the content of a seccomp file,
// so that editing a profile (or a new default profile in an upgrade) keeps
// the uid. The registry (idregistry.go) makes the uid a key has been given
// its own forever.

// identityVersion is part of every key, so that a change of what counts is a
// deliberate change of every key.
const identityVersion = "mcpsandbox-identity/1"

// identity is the canonical description of a server that its key hashes.
type identity struct {
	Version    string
	Exe        string
	Args       []string
	Dir        string
	ReadOnly   []string
	ReadWrite  []string
	StateDir   string `json:",omitempty"`
	NetHost    bool   // none and host, as keys made before Network encode them
	Net        string `json:",omitempty"` // any other mode by name, so it keys apart without changing theirs
	Env        []string
	Seccomp    string
	SeccompLog bool
}

// serverKey is the identity's SHA-256; what the registry records.
type serverKey [sha256.Size]byte

func (k serverKey) String() string { return hex.EncodeToString(k[:]) }

// preferred is where the key's search for a free id starts.
func (k serverKey) preferred() uint32 {
	return binary.BigEndian.Uint32(k[:4]) % DynamicIDCount
}

// identityKey derives the key of the server cfg describes (resolved, so that
// equivalent specs agree) with spec's seccomp settings.
func identityKey(cfg *initConfig, spec Spec) serverKey {
	id := identity{
		Version:    identityVersion,
		Exe:        cfg.Exe,
		Args:       cfg.Args,
		Dir:        cfg.Dir,
		ReadOnly:   []string{},
		ReadWrite:  []string{},
		NetHost:    cfg.Net == NetHost,
		Env:        slices.Sorted(slices.Values(cfg.Env)),
		Seccomp:    spec.Seccomp,
		SeccompLog: spec.SeccompLog,
	}
	if cfg.Net != NetNone && cfg.Net != NetHost {
		id.Net = cfg.Net.String()
	}
	for _, b := range cfg.Binds { // sorted by resolveBinds
		switch {
		case b.State:
			id.StateDir = b.Path
		case b.Writable:
			id.ReadWrite = append(id.ReadWrite, b.Path)
		default:
			id.ReadOnly = append(id.ReadOnly, b.Path)
		}
	}
	if id.StateDir != "" {
		return stateDirKey(id.StateDir)
	}
	if id.Seccomp != "default" && id.Seccomp != "" {
		if abs, err := filepath.Abs(id.Seccomp); err == nil {
			id.Seccomp = abs
		}
	}
	return keyOf(id)
}

// stateDirKey is the key of the server of the state directory path.
func stateDirKey(path string) serverKey {
	return keyOf(identity{Version: identityVersion, StateDir: path})
}

func keyOf(id identity) serverKey {
	b, err := json.Marshal(id)
	if err != nil {
		panic("sandbox: encoding a server identity: " + err.Error()) // strings and bools only
	}
	return sha256.Sum256(b)
}
