package daemon

import (
	"os"
	"time"
)

// Status is the answer to a status request: the daemon, and per server
// and instance what its supervisor reports. The JSON keys are documented
// in docs/daemon.md; they are stable.
type Status struct {
	Pid     int            `json:"pid"`
	Config  string         `json:"config"`
	Socket  string         `json:"socket"`
	Started time.Time      `json:"started"`
	Servers []ServerStatus `json:"servers"`
}

// ServerStatus is one server of the config.
type ServerStatus struct {
	Name         string           `json:"name"`
	Policy       string           `json:"policy"` // the policy file or built-in applied
	Why          string           `json:"why"`    // why that one
	Prestart     int              `json:"prestart"`
	MaxInstances int              `json:"max_instances"`
	Users        string           `json:"users"`                      // who may connect, in words
	Backoff      string           `json:"prestart_backoff,omitempty"` // why prestarts wait, while they do
	Instances    []InstanceStatus `json:"instances"`
}

// InstanceStatus is one instance: supervisor.Status, with who it serves.
type InstanceStatus struct {
	ID         string     `json:"id"`    // NAME#N
	State      string     `json:"state"` // supervisor.Status.State ("warm": no client yet)
	Generation int        `json:"generation"`
	Pid        int        `json:"pid"`
	Started    *time.Time `json:"started,omitempty"` // when the current process started
	UptimeMs   int64      `json:"uptime_ms"`         // of the current process
	Restarts   int        `json:"restarts"`
	PingRTTMs  float64    `json:"ping_rtt_ms"` // the last answered heartbeat's; 0 before any
	Memory     uint64     `json:"memory_bytes"`
	Pids       uint64     `json:"pids"`
	LastExit   string     `json:"last_exit"`
	ClientUID  *int       `json:"client_uid,omitempty"` // absent while warm
	ClientPid  *int       `json:"client_pid,omitempty"` // the connecting process
	Attached   *time.Time `json:"attached,omitempty"`   // since when it has its client
	// DeniedHosts are the hosts the server tried that its policy does not
	// allow, each with the flag that allows it; DeniedOthers counts the
	// attempts at hosts past those.
	DeniedHosts  []DeniedHost `json:"denied_hosts,omitempty"`
	DeniedOthers uint64       `json:"denied_others,omitempty"`
	// Held are the items of the server the lock holds for approval,
	// as `mcpsandbox pins approve NAME ITEM` names them, and why.
	Held []HeldItem `json:"held,omitempty"`
}

// HeldItem is an item held for approval (docs/pins.md).
type HeldItem struct {
	Item   string `json:"item"`   // "tool:write_file"
	Reason string `json:"reason"` // "new", "changed" or "unpinned"
}

// DeniedHost is a host a server tried that its policy does not allow.
type DeniedHost struct {
	Host string `json:"host"`
	Fix  string `json:"fix"` // "--allow-host HOST"
}

// status reports every server, in config order.
func (d *daemon) status() *Status {
	d.mu.Lock()
	st := &Status{Pid: os.Getpid(), Config: d.cfg.File, Socket: d.socket, Started: d.started, Servers: []ServerStatus{}}
	type pending struct {
		server, idx int
		inst        *instance
	}
	var todo []pending
	for _, name := range d.order {
		s := d.servers[name]
		ss := ServerStatus{Name: s.name, Policy: s.res.Ref, Why: s.why(), Prestart: s.prestart, MaxInstances: s.max, Users: s.allow.String(), Instances: []InstanceStatus{}}
		if s.failures > 0 {
			ss.Backoff = s.lastFail
		}
		for _, inst := range s.instances {
			is := InstanceStatus{ID: inst.id, State: "starting"}
			if inst.attached {
				uid, pid, since := inst.client.UID, inst.client.Pid, inst.since
				is.ClientUID, is.ClientPid, is.Attached = &uid, &pid, &since
			}
			if inst.sess != nil {
				todo = append(todo, pending{len(st.Servers), len(ss.Instances), inst})
			}
			ss.Instances = append(ss.Instances, is)
		}
		for _, inst := range s.pending {
			ss.Instances = append(ss.Instances, InstanceStatus{ID: inst.id, State: "starting"})
		}
		st.Servers = append(st.Servers, ss)
	}
	d.mu.Unlock()
	// The sessions' own locks are taken outside the daemon's.
	now := time.Now()
	for _, p := range todo {
		sup := p.inst.sess.Status()
		is := &st.Servers[p.server].Instances[p.idx]
		is.State, is.Generation, is.Pid, is.Restarts = sup.State, sup.Generation, sup.Pid, sup.Restarts
		is.PingRTTMs = float64(sup.PingRTT) / float64(time.Millisecond)
		is.Memory, is.Pids, is.LastExit = sup.Memory, sup.Pids, sup.LastExit
		for _, h := range sup.Denied.Hosts {
			is.DeniedHosts = append(is.DeniedHosts, DeniedHost{Host: h.Host, Fix: h.Fix})
		}
		is.DeniedOthers = sup.Denied.Others
		for _, h := range sup.Held {
			is.Held = append(is.Held, HeldItem{Item: h.Item, Reason: h.Reason})
		}
		if !sup.Started.IsZero() {
			started := sup.Started
			is.Started, is.UptimeMs = &started, now.Sub(started).Milliseconds()
		}
	}
	return st
}
