package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The few rtnetlink requests egress capture makes, on the NETLINK_ROUTE
// socket the init stage made in the server's network namespace
// (initstage's init_net.c). No library fits that socket:
// vishvananda/netlink and jsimonetti/rtnetlink open sockets of their own
// (entering a namespace by setns, which an unprivileged supervisor may not
// do), and mdlayher/netlink adopts one only through its Socket interface,
// whose message encoding and parsing would be most of this file.

// loIndex is lo's interface index, which is 1 in every network namespace
// (the kernel's LOOPBACK_IFINDEX).
const loIndex = 1

// rtConn sends requests on a NETLINK_ROUTE socket and checks each ack.
type rtConn struct {
	fd  int
	seq uint32
	buf []byte
}

func newRTConn(fd int) *rtConn {
	// A kernel answers at once; a bound keeps a wedged one from hanging Start.
	tv := unix.NsecToTimeval(int64(5 * time.Second))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	return &rtConn{fd: fd, buf: make([]byte, 16<<10)}
}

// route is one RTM_NEWROUTE request.
type route struct {
	dst   netip.Prefix
	table uint8 // unix.RT_TABLE_LOCAL, unix.RT_TABLE_MAIN
	typ   uint8 // unix.RTN_LOCAL, unix.RTN_PROHIBIT
	scope uint8
	oif   uint32 // 0: no output interface
}

func (r route) family() uint8 {
	if r.dst.Addr().Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

// add creates the route; one that exists already is an error (NLM_F_EXCL).
func (c *rtConn) add(r route) error {
	body := make([]byte, unix.SizeofRtMsg, unix.SizeofRtMsg+32)
	body[0] = r.family()
	body[1] = uint8(r.dst.Bits())
	body[4] = r.table
	body[5] = unix.RTPROT_STATIC
	body[6] = r.scope
	body[7] = r.typ
	if r.dst.Bits() > 0 {
		body = rtAttr(body, unix.RTA_DST, r.dst.Addr().AsSlice())
	}
	if r.oif != 0 {
		body = rtAttr(body, unix.RTA_OIF, binary.NativeEndian.AppendUint32(nil, r.oif))
	}
	return c.request(unix.RTM_NEWROUTE, unix.NLM_F_CREATE|unix.NLM_F_EXCL, body)
}

// rtAttr appends one attribute, padded to 4 bytes.
func rtAttr(b []byte, typ uint16, value []byte) []byte {
	b = binary.NativeEndian.AppendUint16(b, uint16(unix.SizeofRtAttr+len(value)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, value...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// request sends one message asking for an ack and returns the kernel's
// answer to it: nil, or its errno.
func (c *rtConn) request(typ, flags uint16, body []byte) error {
	c.seq++
	msg := make([]byte, 0, unix.NLMSG_HDRLEN+len(body))
	msg = binary.NativeEndian.AppendUint32(msg, uint32(unix.NLMSG_HDRLEN+len(body)))
	msg = binary.NativeEndian.AppendUint16(msg, typ)
	msg = binary.NativeEndian.AppendUint16(msg, flags|unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	msg = binary.NativeEndian.AppendUint32(msg, c.seq)
	msg = binary.NativeEndian.AppendUint32(msg, 0) // port id: the kernel's
	msg = append(msg, body...)
	if err := retryEINTR(func() error { return unix.Sendto(c.fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}) }); err != nil {
		return fmt.Errorf("netlink send: %w", err)
	}
	for {
		var n int
		err := retryEINTR(func() (err error) { n, _, err = unix.Recvfrom(c.fd, c.buf, 0); return err })
		if err != nil {
			return fmt.Errorf("netlink receive: %w", err)
		}
		if answer, ok, err := c.ack(c.buf[:n]); err != nil || ok {
			if err != nil {
				return err
			}
			return answer
		}
	}
}

// ack finds the answer to the last request in b: ok once found, answer
// nil for success, else its errno.
func (c *rtConn) ack(b []byte) (answer error, ok bool, err error) {
	for len(b) >= unix.NLMSG_HDRLEN {
		l := binary.NativeEndian.Uint32(b[0:4])
		typ := binary.NativeEndian.Uint16(b[4:6])
		seq := binary.NativeEndian.Uint32(b[8:12])
		if l < unix.NLMSG_HDRLEN || int(l) > len(b) {
			return nil, false, errors.New("netlink: malformed answer")
		}
		if seq == c.seq && typ == unix.NLMSG_ERROR {
			if l < unix.NLMSG_HDRLEN+4 {
				return nil, false, errors.New("netlink: ack cut short")
			}
			if errno := -int32(binary.NativeEndian.Uint32(b[unix.NLMSG_HDRLEN:])); errno != 0 {
				return syscall.Errno(errno), true, nil
			}
			return nil, true, nil
		}
		next := (int(l) + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1)
		if next > len(b) {
			break
		}
		b = b[next:]
	}
	return nil, false, nil
}

func retryEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}
