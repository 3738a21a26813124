package initstage

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
	cfgHostNet = C.CFG_HOST_NETNS
	cfgNoFile  = C.CFG_NOFILE
	cfgUID     = C.CFG_UID
	cfgGID     = C.CFG_GID
	cfgUserNS  = C.CFG_USERNS
	cfgSeccomp = C.CFG_SECCOMP
	cfgEtc     = C.CFG_ETC
	cfgFSize   = C.CFG_FSIZE
	cfgNoExec  = C.CFG_NOEXEC_TMP
	cfgTmpfs   = C.CFG_TMPFS
	cfgMask    = C.CFG_MASK_SOCKET
	cfgPin     = C.CFG_PIN
	cgJoin     = C.CG_JOIN
	cgView     = C.CG_VIEW
	cfgEgress  = C.CFG_EGRESS
)

// Message is one configuration message of init.h for the init stage.
type Message struct{ buf []byte }

func (m *Message) add(tag byte, value []byte) {
	m.buf = append(m.buf, tag)
	m.buf = binary.LittleEndian.AppendUint32(m.buf, uint32(len(value)))
	m.buf = append(m.buf, value...)
}

func (m *Message) str(tag byte, s string) { m.add(tag, []byte(s)) }

func (m *Message) flag(tag byte, on bool) {
	if on {
		m.add(tag, nil)
	}
}

func (m *Message) u64(tag byte, v uint64) { m.add(tag, binary.LittleEndian.AppendUint64(nil, v)) }

func (m *Message) u32(tag byte, v uint32) { m.add(tag, binary.LittleEndian.AppendUint32(nil, v)) }

// Send writes the message to the init stage's configuration pipe, length
// first.
func (m *Message) Send(w io.Writer) error {
	_, err := w.Write(append(binary.LittleEndian.AppendUint32(nil, uint32(len(m.buf))), m.buf...))
	return err
}

// Encode encodes what the init stage needs from c, except its cgroup
// (EncodeCgroup). A configuration the init stage cannot take is refused.
func (c *Config) Encode() (*Message, error) {
	strs := append(append([]string{c.Exe, c.Dir}, c.Args...), c.Env...)
	for _, b := range c.Binds {
		strs = append(strs, b.Path)
	}
	strs = append(strs, c.Tmpfs...)
	if c.Landlock != nil {
		strs = append(strs, c.Landlock.Places...)
	}
	strs = append(strs, c.MaskedSockets...)
	strs = append(strs, c.Pins...)
	for _, s := range strs {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, fmt.Errorf("the server's command, environment and paths cannot contain NUL bytes: %q", s)
		}
	}
	m := &Message{}
	for _, a := range c.Args {
		m.str(cfgArg, a)
	}
	for _, e := range c.Env {
		m.str(cfgEnv, e)
	}
	m.str(cfgExe, c.Exe)
	m.str(cfgDir, c.Dir)
	for _, b := range c.Binds {
		v := []byte{0, 0}
		switch {
		case b.State:
			v[0] = 2
		case b.Writable:
			v[0] = 1
		}
		var owner IDMap
		if b.IDMap != nil {
			v[1], owner = 1, *b.IDMap
		}
		v = binary.LittleEndian.AppendUint32(v, owner.UID)
		v = binary.LittleEndian.AppendUint32(v, owner.GID)
		m.add(cfgBind, append(v, b.Path...))
	}
	m.flag(cfgExeBind, c.ExeBind)
	for _, p := range c.MaskedSockets {
		m.str(cfgMask, p)
	}
	for _, p := range c.Pins {
		m.str(cfgPin, p)
	}
	m.u64(cfgTmpSize, uint64(c.TmpSize))
	for _, p := range c.Tmpfs {
		m.str(cfgTmpfs, p)
	}
	m.flag(cfgHostNet, c.HostNetNS)
	m.u64(cfgNoFile, c.NoFile)
	m.u32(cfgUID, c.UID)
	m.u32(cfgGID, c.GID)
	m.flag(cfgUserNS, c.UserNS)
	if c.FileSize > 0 {
		m.u64(cfgFSize, c.FileSize)
	}
	m.flag(cfgNoExec, c.NoExecTmp)
	if len(c.Seccomp) > 0 {
		if len(c.Seccomp)%8 != 0 || len(c.Seccomp)/8 > 4096 {
			return nil, fmt.Errorf("seccomp: BPF program of %d bytes is not 1..4096 instructions of 8 bytes", len(c.Seccomp))
		}
		m.add(cfgSeccomp, c.Seccomp)
	}
	if e := c.Egress; e != nil {
		if err := e.check(c.HostNetNS); err != nil {
			return nil, err
		}
		m.add(cfgEgress, binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(e.TCP4)), uint32(e.TCP6)))
	}
	if c.Landlock != nil {
		m.add(cfgLandlock, c.Landlock.encode())
	}
	for _, name := range slices.Sorted(maps.Keys(c.Etc)) {
		m.add(cfgEtc, append([]byte(name+"\x00"), c.Etc[name]...))
	}
	return m, nil
}

// EncodeCgroup encodes the cgroup part of c, sent once the cgroup exists.
func (c *Config) EncodeCgroup() *Message {
	m := &Message{}
	for _, f := range c.CgroupJoin {
		m.str(cgJoin, f)
	}
	for _, d := range c.CgroupView {
		m.str(cgView, strings.Join(append([]string{d.Name, d.Dir}, d.Links...), "\x00"))
	}
	return m
}
