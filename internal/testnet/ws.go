package testnet

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// The WebSocket echo (RFC 6455), written here to keep a WebSocket library
// out of the module for one test server: it echoes each data frame back
// unmasked, answers pings and closes, and counts the messages it echoed.

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

const (
	wsContinuation = 0x0
	wsText         = 0x1
	wsBinary       = 0x2
	wsClose        = 0x8
	wsPing         = 0x9
	wsPong         = 0xA
	wsMaxPayload   = 1 << 20
)

type wsEcho struct {
	echoed atomic.Int64 // data frames echoed, all connections
}

func (e *wsEcho) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Sec-WebSocket-Key")
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || key == "" || r.Header.Get("Sec-WebSocket-Version") != "13" {
		http.Error(w, "a WebSocket upgrade (version 13) is expected here", http.StatusBadRequest)
		return
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	sum := sha1.Sum([]byte(key + wsGUID))
	rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n")
	if rw.Flush() != nil {
		return
	}
	for {
		fin, op, payload, err := wsReadFrame(rw.Reader)
		if err != nil {
			return
		}
		switch op {
		case wsClose:
			wsWriteFrame(rw.Writer, true, wsClose, payload)
			rw.Flush()
			return
		case wsPing:
			wsWriteFrame(rw.Writer, true, wsPong, payload)
		case wsPong:
			continue
		case wsText, wsBinary, wsContinuation:
			wsWriteFrame(rw.Writer, fin, op, payload)
			if fin {
				e.echoed.Add(1)
			}
		default:
			return
		}
		if rw.Flush() != nil {
			return
		}
	}
}

func wsReadFrame(r *bufio.Reader) (fin bool, op byte, payload []byte, err error) {
	var h [2]byte
	if _, err = io.ReadFull(r, h[:]); err != nil {
		return
	}
	fin, op = h[0]&0x80 != 0, h[0]&0x0f
	masked := h[1]&0x80 != 0
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err = io.ReadFull(r, b[:]); err != nil {
			return
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err = io.ReadFull(r, b[:]); err != nil {
			return
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if !masked || n > wsMaxPayload {
		return false, 0, nil, errors.New("websocket: a client frame must be masked and at most 1 MiB")
	}
	var mask [4]byte
	if _, err = io.ReadFull(r, mask[:]); err != nil {
		return
	}
	payload = make([]byte, n)
	if _, err = io.ReadFull(r, payload); err != nil {
		return
	}
	for i := range payload {
		payload[i] ^= mask[i%4]
	}
	return
}

func wsWriteFrame(w *bufio.Writer, fin bool, op byte, payload []byte) {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	w.WriteByte(b0)
	switch n := len(payload); {
	case n < 126:
		w.WriteByte(byte(n))
	case n <= 0xffff:
		w.WriteByte(126)
		binary.Write(w, binary.BigEndian, uint16(n))
	default:
		w.WriteByte(127)
		binary.Write(w, binary.BigEndian, uint64(n))
	}
	w.Write(payload)
}
