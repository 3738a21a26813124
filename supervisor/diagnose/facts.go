package diagnose

import (
	"io/fs"
	"os"
	"path/filepath"
)

// FS is what the diagnosis reads of the host's file system (mcpsandbox runs
// outside the sandbox, so it sees the host as it is).
type FS interface {
	Stat(path string) (fs.FileInfo, error)
	EvalSymlinks(path string) (string, error)
}

// OS is the host's file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) Stat(path string) (fs.FileInfo, error)    { return os.Stat(path) }
func (osFS) EvalSymlinks(path string) (string, error) { return filepath.EvalSymlinks(path) }

// Facts are what the diagnosis is told of the server's confinement: the
// policy's settings, as plain values, and the host.
type Facts struct {
	Command   []string // the server's command line, as run
	WorkDir   string   // its working directory, from which relative paths in Command are taken ("" unknown)
	ReadOnly  []string // read-only grants
	ReadWrite []string // writable grants
	Net       string   // the network setting
	NetHost   string   // the Net value that gives the server the host's network
	NetEgress string   // the Net value that reaches only the hosts AllowHosts names
	User      string   // the user the server runs as ("": a fresh unprivileged one when Root)
	Root      bool     // mcpsandbox runs as root
	Env       []string // the policy's environment: NAME passes mcpsandbox's on, NAME=VALUE sets it
	Tmpfs     []string // private tmpfs: the server's own, not the host's
	// Own are mcpsandbox's own places on this host (its state, its
	// configuration, its sockets): a diagnosis never names them as a grant.
	Own []string

	// HostEnv reports whether mcpsandbox's own environment has the
	// variable; nil: it has none.
	HostEnv func(name string) bool
	// FS is the host's file system; nil: OS.
	FS FS
}

func (f *Facts) fs() FS {
	if f.FS == nil {
		return OS
	}
	return f.FS
}

func (f *Facts) hostHas(name string) bool { return f.HostEnv != nil && f.HostEnv(name) }
