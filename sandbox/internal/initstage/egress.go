package initstage

/*
#define INIT_STAGE_GO
#include "init.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// MaxEgressListeners is how many TCP capture sockets (both families) one
// hand-over carries: SCM_RIGHTS takes EGRESS_MAX_FDS descriptors a message,
// and the netlink and DNS stub sockets come with them.
const MaxEgressListeners = C.EGRESS_MAX_FDS - C.EGRESS_FIXED_FDS

// EgressSockets is how many TCP capture sockets of each family the init
// stage makes for egress capture, besides the netlink and DNS stub sockets
// it always makes then (init_net.c).
type EgressSockets struct {
	TCP4, TCP6 int
}

func (e EgressSockets) check(hostNetNS bool) error {
	switch {
	case hostNetNS:
		return errors.New("egress capture needs a network namespace of the sandbox's own")
	case e.TCP4 < 0 || e.TCP6 < 0 || e.TCP4+e.TCP6 > MaxEgressListeners:
		return fmt.Errorf("egress capture: %d IPv4 and %d IPv6 listeners: at most %d in all", e.TCP4, e.TCP6, MaxEgressListeners)
	}
	return nil
}

// EgressPair makes the channel of the hand-over: the supervisor's end, and
// the init stage's, for Files.Egress (the caller closes its copy once the
// init stage has it).
func EgressPair() (supervisor *net.UnixConn, stage *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("egress capture: socketpair: %w", err)
	}
	f := os.NewFile(uintptr(fds[0]), "egress-handover")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("egress capture: %w", err)
	}
	return c.(*net.UnixConn), os.NewFile(uintptr(fds[1]), "egress-handover"), nil
}

// Sockets are what the init stage handed over: made in the sandbox's
// network namespace, neither bound nor configured, blocking, close-on-exec.
type Sockets struct {
	Netlink    int // NETLINK_ROUTE
	DNS        int // UDP, AF_INET
	DNSTCP     int // TCP, AF_INET
	TCP4, TCP6 []int
}

// Close closes every socket still held; a taken one is set to -1 first.
func (s *Sockets) Close() {
	for _, fd := range s.all() {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

func (s *Sockets) all() []int {
	return append(append([]int{s.Netlink, s.DNS, s.DNSTCP}, s.TCP4...), s.TCP6...)
}

// ErrStageGone is ReceiveSockets' error when the init stage closed its end
// without handing anything over: it failed, and its report says why.
var ErrStageGone = errors.New("the init stage ended before handing over the sockets")

// ReceiveSockets takes the init stage's one message on conn, which must
// carry exactly the sockets want asks for, before deadline.
func ReceiveSockets(conn *net.UnixConn, want EgressSockets, deadline time.Time) (*Sockets, error) {
	conn.SetReadDeadline(deadline)
	var counts [8]byte
	oob := make([]byte, unix.CmsgSpace(C.EGRESS_MAX_FDS*4))
	n, oobn, flags, _, err := conn.ReadMsgUnix(counts[:], oob)
	var fds []int
	if err == nil && oobn > 0 {
		msgs, perr := unix.ParseSocketControlMessage(oob[:oobn])
		for i := range msgs {
			if more, err := unix.ParseUnixRights(&msgs[i]); err == nil {
				fds = append(fds, more...)
			}
		}
		err = perr
	}
	drop := func(err error) (*Sockets, error) {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, err
	}
	switch {
	case err != nil:
		return drop(fmt.Errorf("receiving the sockets from the init stage: %w", err))
	case n == 0 && oobn == 0:
		return drop(ErrStageGone)
	case flags&(unix.MSG_CTRUNC|unix.MSG_TRUNC) != 0 || n != len(counts):
		return drop(errors.New("the init stage's hand-over was cut short"))
	}
	tcp4, tcp6 := int(binary.LittleEndian.Uint32(counts[:4])), int(binary.LittleEndian.Uint32(counts[4:]))
	if tcp4 != want.TCP4 || tcp6 != want.TCP6 || len(fds) != C.EGRESS_FIXED_FDS+tcp4+tcp6 {
		return drop(fmt.Errorf("the init stage handed over %d descriptors for %d+%d listeners, want %d+%d", len(fds), tcp4, tcp6, want.TCP4, want.TCP6))
	}
	return &Sockets{Netlink: fds[0], DNS: fds[1], DNSTCP: fds[2], TCP4: fds[3 : 3+tcp4], TCP6: fds[3+tcp4:]}, nil
}
