package sandbox

/*
#define INIT_STAGE_GO
#include "init.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strings"
)

// message builds one configuration message of init.h for the init stage.
type message struct{ buf []byte }

func (m *message) add(tag C.int, value []byte) {
	m.buf = append(m.buf, byte(tag))
	m.buf = binary.LittleEndian.AppendUint32(m.buf, uint32(len(value)))
	m.buf = append(m.buf, value...)
}

func (m *message) str(tag C.int, s string) { m.add(tag, []byte(s)) }

func (m *message) flag(tag C.int, on bool) {
	if on {
		m.add(tag, nil)
	}
}

func (m *message) u64(tag C.int, v uint64) { m.add(tag, binary.LittleEndian.AppendUint64(nil, v)) }

func (m *message) u32(tag C.int, v uint32) { m.add(tag, binary.LittleEndian.AppendUint32(nil, v)) }

// writeTo sends the message, length first.
func (m *message) writeTo(w io.Writer) error {
	_, err := w.Write(append(binary.LittleEndian.AppendUint32(nil, uint32(len(m.buf))), m.buf...))
	return err
}

// configMessage encodes what the init stage needs from cfg, except its
// cgroup (cgroupMessage). The /etc files that depend on it are made here.
func configMessage(cfg *initConfig) (*message, error) {
	for _, s := range append(append([]string{cfg.Exe, cfg.Dir}, cfg.Args...), cfg.Env...) {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, fmt.Errorf("the server's command, environment and paths cannot contain NUL bytes: %q", s)
		}
	}
	m := &message{}
	for _, a := range cfg.Args {
		m.str(C.CFG_ARG, a)
	}
	for _, e := range cfg.Env {
		m.str(C.CFG_ENV, e)
	}
	m.str(C.CFG_EXE, cfg.Exe)
	m.str(C.CFG_DIR, cfg.Dir)
	for _, b := range cfg.Binds {
		v := []byte{0, 0}
		if b.Writable {
			v[0] = 1
		}
		var owner idMap
		if b.IDMap != nil {
			v[1], owner = 1, *b.IDMap
		}
		v = binary.LittleEndian.AppendUint32(v, owner.UID)
		v = binary.LittleEndian.AppendUint32(v, owner.GID)
		m.add(C.CFG_BIND, append(v, b.Path...))
	}
	m.flag(C.CFG_EXE_BIND, cfg.ExeBind)
	m.u64(C.CFG_TMP_SIZE, uint64(cfg.TmpSize))
	m.flag(C.CFG_NET_HOST, cfg.NetHost)
	m.u64(C.CFG_NOFILE, cfg.NoFile)
	m.u32(C.CFG_UID, cfg.UID)
	m.u32(C.CFG_GID, cfg.GID)
	m.flag(C.CFG_USERNS, cfg.UserNS)
	if len(cfg.Seccomp) > 0 {
		if len(cfg.Seccomp)%8 != 0 || len(cfg.Seccomp)/8 > 4096 {
			return nil, fmt.Errorf("seccomp: BPF program of %d bytes is not 1..4096 instructions of 8 bytes", len(cfg.Seccomp))
		}
		m.add(C.CFG_SECCOMP, cfg.Seccomp)
	}
	files, err := etcConfigFiles(cfg)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		m.add(C.CFG_ETC, append([]byte(name+"\x00"), files[name]...))
	}
	return m, nil
}

// cgroupMessage encodes the cgroup part of cfg, sent once the cgroup exists.
func cgroupMessage(cfg *initConfig) *message {
	m := &message{}
	for _, f := range cfg.CgroupJoin {
		m.str(C.CG_JOIN, f)
	}
	for _, d := range cfg.CgroupView {
		m.str(C.CG_VIEW, strings.Join(append([]string{d.Name, d.Dir}, d.Links...), "\x00"))
	}
	return m
}
