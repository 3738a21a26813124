//go:build linux

package main

import (
	"bufio"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
)

// errnoErr turns a raw syscall's errno into an error, nil for success.
func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func uintptrOf[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

type mount struct {
	point   string
	root    string // what of its file system the mount shows ("/" = all of it)
	fstype  string
	options string // per-mount options: "rw,nosuid,nodev"
	super   string // file system options: "rw,memory" for a cgroup v1 hierarchy
}

func (m *mount) nosuid() bool { return hasOption(m.options, "nosuid") }
func (m *mount) rdonly() bool { return hasOption(m.options, "ro") }

func hasOption(opts, o string) bool {
	for _, x := range strings.Split(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}

type mountTable []mount

// readMountinfo parses /proc/self/mountinfo.
func readMountinfo() (mountTable, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var t mountTable
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, postFields := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 6 || len(postFields) < 1 {
			continue
		}
		m := mount{point: unescapeMount(fields[4]), root: unescapeMount(fields[3]), options: fields[5], fstype: postFields[0]}
		if len(postFields) > 2 {
			m.super = postFields[2]
		}
		t = append(t, m)
	}
	return t, sc.Err()
}

// containing returns the last-mounted mount whose point is a prefix of p.
func (t mountTable) containing(p string) *mount {
	var best *mount
	for i := range t {
		m := &t[i]
		if pathrule.Within(p, m.point) {
			if best == nil || len(m.point) >= len(best.point) {
				best = m
			}
		}
	}
	return best
}

func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}
