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
	"maps"
	"slices"
	"strings"
)

// Record tags of init.h.
const (
	cfgArg     = C.CFG_ARG
	cfgExe     = C.CFG_EXE
	cfgEnv     = C.CFG_ENV
	cfgDir     = C.CFG_DIR
	cfgBind    = C.CFG_BIND
	cfgExeBind = C.CFG_EXE_BIND
	cfgTmpSize = C.CFG_TMP_SIZE
	cfgNetHost = C.CFG_NET_HOST
	cfgNoFile  = C.CFG_NOFILE
	cfgUID     = C.CFG_UID
	cfgGID     = C.CFG_GID
	cfgUserNS  = C.CFG_USERNS
	cfgSeccomp = C.CFG_SECCOMP
	cfgEtc     = C.CFG_ETC
	cgJoin     = C.CG_JOIN
	cgView     = C.CG_VIEW
)

// message builds one configuration message of init.h for the init stage.
type message struct{ buf []byte }

func (m *message) add(tag byte, value []byte) {
	m.buf = append(m.buf, tag)
	m.buf = binary.LittleEndian.AppendUint32(m.buf, uint32(len(value)))
	m.buf = append(m.buf, value...)
}

func (m *message) str(tag byte, s string) { m.add(tag, []byte(s)) }

func (m *message) flag(tag byte, on bool) {
	if on {
		m.add(tag, nil)
	}
}

func (m *message) u64(tag byte, v uint64) { m.add(tag, binary.LittleEndian.AppendUint64(nil, v)) }

func (m *message) u32(tag byte, v uint32) { m.add(tag, binary.LittleEndian.AppendUint32(nil, v)) }

// writeTo sends the message, length first.
func (m *message) writeTo(w io.Writer) error {
	_, err := w.Write(append(binary.LittleEndian.AppendUint32(nil, uint32(len(m.buf))), m.buf...))
	return err
}

// configMessage encodes what the init stage needs from cfg, except its
// cgroup (cgroupMessage). The /etc files that depend on it are made here.
func configMessage(cfg *initConfig) (*message, error) {
	strs := append(append([]string{cfg.Exe, cfg.Dir}, cfg.Args...), cfg.Env...)
	for _, b := range cfg.Binds {
		strs = append(strs, b.Path)
	}
	for _, s := range strs {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, fmt.Errorf("the server's command, environment and paths cannot contain NUL bytes: %q", s)
		}
	}
	m := &message{}
	for _, a := range cfg.Args {
		m.str(cfgArg, a)
	}
	for _, e := range cfg.Env {
		m.str(cfgEnv, e)
	}
	m.str(cfgExe, cfg.Exe)
	m.str(cfgDir, cfg.Dir)
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
		m.add(cfgBind, append(v, b.Path...))
	}
	m.flag(cfgExeBind, cfg.ExeBind)
	m.u64(cfgTmpSize, uint64(cfg.TmpSize))
	m.flag(cfgNetHost, cfg.NetHost)
	m.u64(cfgNoFile, cfg.NoFile)
	m.u32(cfgUID, cfg.UID)
	m.u32(cfgGID, cfg.GID)
	m.flag(cfgUserNS, cfg.UserNS)
	if len(cfg.Seccomp) > 0 {
		if len(cfg.Seccomp)%8 != 0 || len(cfg.Seccomp)/8 > 4096 {
			return nil, fmt.Errorf("seccomp: BPF program of %d bytes is not 1..4096 instructions of 8 bytes", len(cfg.Seccomp))
		}
		m.add(cfgSeccomp, cfg.Seccomp)
	}
	files, err := etcConfigFiles(cfg)
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		m.add(cfgEtc, append([]byte(name+"\x00"), files[name]...))
	}
	return m, nil
}

// cgroupMessage encodes the cgroup part of cfg, sent once the cgroup exists.
func cgroupMessage(cfg *initConfig) *message {
	m := &message{}
	for _, f := range cfg.CgroupJoin {
		m.str(cgJoin, f)
	}
	for _, d := range cfg.CgroupView {
		m.str(cgView, strings.Join(append([]string{d.Name, d.Dir}, d.Links...), "\x00"))
	}
	return m
}
