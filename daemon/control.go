package daemon

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"time"
)

// control answers a control request: the daemon's own user's and root's.
func (d *daemon) control(c *net.UnixConn, r *bufio.Reader, p peer, h Hello) {
	if !controlAllowed(p.UID, d.self) {
		d.refuse(c, &Refusal{Kind: RefusedPeer, Message: "not allowed",
			Reason: fmt.Sprintf("%s may not control this daemon, which is %s's: run the command as that user or as root", uidName(p.UID), uidName(d.self))})
		return
	}
	switch h.Control {
	case ControlStatus:
		d.reply(c, Answer{Status: d.status()})
	case ControlRestart:
		names, ref := d.restart(h.Server, p)
		if ref != nil {
			d.refuse(c, ref)
			return
		}
		d.reply(c, Answer{Restarted: names})
	case ControlReload:
		rep, err := d.reload()
		if err != nil {
			d.refuse(c, &Refusal{Kind: RefusedReload, Message: "reload failed", Reason: "the config was not reloaded; the running one stays: " + err.Error()})
			return
		}
		d.reply(c, Answer{Reload: rep})
	case ControlLogs:
		d.logs(c, r, h)
	default:
		d.refuse(c, &Refusal{Kind: RefusedHello, Message: "unknown control request",
			Reason: fmt.Sprintf("no control request %q: use %s, %s, %s or %s", h.Control, ControlStatus, ControlRestart, ControlLogs, ControlReload)})
	}
}

// reply answers ok and closes the connection.
func (d *daemon) reply(c net.Conn, a Answer) {
	c.SetWriteDeadline(time.Now().Add(answerTimeout))
	answerOK(c, a)
	c.Close()
}

// known is the server named name, or why there is none. Under d.mu.
func (d *daemon) known(name string) (*server, *Refusal) {
	if s := d.servers[name]; s != nil {
		return s, nil
	}
	return nil, &Refusal{Kind: RefusedNoServer, Message: "no such server",
		Reason: fmt.Sprintf("the daemon's config %s has no server %q; it has %s", d.cfg.File, name, listOrNone(d.order))}
}

// restart restarts every instance of a server, as after a crash, each
// session replayed (invisible to its host).
func (d *daemon) restart(name string, p peer) ([]string, *Refusal) {
	d.mu.Lock()
	s, ref := d.known(name)
	if ref != nil {
		d.mu.Unlock()
		return nil, ref
	}
	var insts []*instance
	for _, inst := range s.instances {
		if inst.sess != nil {
			insts = append(insts, inst)
		}
	}
	// A warm instance ends on Restart (its process is fresh anyway): it
	// leaves the pool first, so its end is no failed prestart, and the
	// pool makes another.
	s.warm = s.warm[:0]
	s.fill()
	d.mu.Unlock()
	reason := fmt.Sprintf("restart requested by %s (mcpsandbox restart)", uidName(p.UID))
	names := []string{}
	for _, inst := range insts {
		if err := inst.sess.Restart(reason); err != nil {
			d.log.Info("mcpsandbox daemon: instance not restarted", "server", name, "instance", inst.id, "error", err)
			continue
		}
		names = append(names, inst.id)
	}
	d.log.Info("mcpsandbox daemon: restarted", "server", name, "instances", len(names), "by_uid", p.UID)
	return names, nil
}

// logs sends a server's ring, then with Follow its new records until the
// client leaves or the daemon stops.
func (d *daemon) logs(c *net.UnixConn, r *bufio.Reader, h Hello) {
	d.mu.Lock()
	_, ref := d.known(h.Server)
	d.mu.Unlock()
	if ref != nil {
		d.refuse(c, ref)
		return
	}
	defer c.Close()
	lines, f := d.rings.lines(h.Server, h.Follow)
	if f != nil {
		defer d.rings.unfollow(h.Server, f)
	}
	w := bufio.NewWriter(c)
	if answerOK(w, Answer{}) != nil {
		return
	}
	for _, l := range lines {
		w.WriteString(l)
	}
	if w.Flush() != nil || f == nil {
		return
	}
	gone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, r) // the client sends nothing more; EOF is its leaving
		close(gone)
	}()
	for {
		select {
		case l := <-f.C:
			if n := d.rings.takeDropped(f); n > 0 {
				fmt.Fprintf(w, "mcpsandbox: %d records dropped: this client read too slowly\n", n)
			}
			w.WriteString(l)
			for more := true; more; {
				select {
				case l := <-f.C:
					w.WriteString(l)
				default:
					more = false
				}
			}
			c.SetWriteDeadline(time.Now().Add(answerTimeout))
			if w.Flush() != nil {
				return
			}
		case <-gone:
			return
		case <-d.ctx.Done():
			return
		}
	}
}
