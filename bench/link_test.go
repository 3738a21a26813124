package bench

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/mcpsandbox/mcpsandbox/internal/testnet"
)

// shapeLink bounds the veth between the client and upstream namespaces to
// rate bits per second each way, as a real link would: a token bucket
// (tbf) on the sending side of each end. 0 takes the bound off again (an
// unbounded veth costs only CPU).
func shapeLink(b *testing.B, e *testnet.Env, rate uint64) {
	b.Helper()
	for _, ns := range []*testnet.NS{e.Client, e.Upstream} {
		err := ns.Do(func() error {
			h, err := netlink.NewHandle()
			if err != nil {
				return err
			}
			defer h.Close()
			veth, err := vethOf(h)
			if err != nil {
				return err
			}
			return shapeDevice(h, veth, rate)
		})
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.EOPNOTSUPP) {
			b.Skipf("bench: this kernel has no tbf qdisc (CONFIG_NET_SCH_TBF) to bound the link with: %v", err)
		}
		if err != nil {
			b.Fatalf("bench: bounding the veth in %s to %d bit/s: %v", ns.Name, rate, err)
		}
	}
	if rate != 0 {
		b.Cleanup(func() { shapeLink(b, e, 0) })
	}
}

// vethOf is the namespace's one veth device.
func vethOf(h *netlink.Handle) (netlink.Link, error) {
	links, err := h.LinkList()
	if err != nil {
		return nil, err
	}
	for _, l := range links {
		if l.Type() == "veth" {
			return l, nil
		}
	}
	return nil, errors.New("no veth device")
}

// shapeDevice replaces dev's root qdisc by a token bucket of rate bit/s,
// or, for 0, deletes it (back to the default). The bucket holds 1 ms at
// rate (at least 64 KiB, a whole TSO segment) and the queue 10 ms more, so
// TCP sees a link's rate without drops from a bucket too small.
func shapeDevice(h *netlink.Handle, dev netlink.Link, rate uint64) error {
	attrs := netlink.QdiscAttrs{LinkIndex: dev.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
	if rate == 0 {
		err := h.QdiscDel(&netlink.GenericQdisc{QdiscAttrs: attrs, QdiscType: "tbf"})
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.EINVAL) {
			return nil // none there
		}
		return err
	}
	bytesPerSec := rate / 8
	burst := max(bytesPerSec/1000, 64<<10)
	tbf := &netlink.Tbf{
		QdiscAttrs: attrs,
		Rate:       bytesPerSec,
		Buffer:     netlink.Xmittime(bytesPerSec, uint32(burst)),
		Limit:      uint32(burst + bytesPerSec/100),
	}
	if err := h.QdiscReplace(tbf); err != nil {
		return fmt.Errorf("tbf %d bit/s on %s: %w", rate, dev.Attrs().Name, err)
	}
	return nil
}
