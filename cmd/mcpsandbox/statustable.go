package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
)

// writeStatus prints a daemon's status for people: a paragraph per
// server, its instances as a table.
func writeStatus(w io.Writer, st *daemon.Status) {
	fmt.Fprintf(w, "daemon pid %d, up %s, config %s, socket %s\n", st.Pid, round(time.Since(st.Started)), st.Config, st.Socket)
	for _, s := range st.Servers {
		fmt.Fprintf(w, "\n%s: policy %s (%s); prestart %d, max-instances %d; users: %s\n", s.Name, s.Policy, s.Why, s.Prestart, s.MaxInstances, s.Users)
		if s.Backoff != "" {
			fmt.Fprintf(w, "  prestarts back off: %s\n", s.Backoff)
		}
		if len(s.Instances) == 0 {
			fmt.Fprintln(w, "  no instances")
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  INSTANCE\tSTATE\tPID\tUPTIME\tRESTARTS\tPING\tMEMORY\tPIDS\tCLIENT\tLAST EXIT")
		for _, i := range s.Instances {
			client := "-"
			if i.ClientUID != nil {
				client = fmt.Sprintf("uid %d, %s", *i.ClientUID, round(time.Since(*i.Attached)))
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", i.ID, i.State, orDash(i.Pid != 0, fmt.Sprint(i.Pid)),
				orDash(i.Started != nil, round(time.Duration(i.UptimeMs)*time.Millisecond)), i.Restarts,
				orDash(i.PingRTTMs > 0, fmt.Sprintf("%.1fms", i.PingRTTMs)), orDash(i.Memory > 0, mib(i.Memory)),
				orDash(i.Pids > 0, fmt.Sprint(i.Pids)), client, orDash(i.LastExit != "", oneLine(i.LastExit)))
		}
		tw.Flush()
		for _, i := range s.Instances {
			writeDenied(w, i)
			writeHeld(w, s.Name, i)
		}
	}
}

// writeDenied names the hosts an instance tried that its policy does not
// allow, and the flags that allow them.
func writeDenied(w io.Writer, i daemon.InstanceStatus) {
	if len(i.DeniedHosts) == 0 {
		return
	}
	hosts, fixes := make([]string, len(i.DeniedHosts)), make([]string, len(i.DeniedHosts))
	for k, h := range i.DeniedHosts {
		hosts[k], fixes[k] = h.Host, h.Fix
	}
	more := ""
	if i.DeniedOthers > 0 {
		more = fmt.Sprintf(" (and %d more attempts at other hosts)", i.DeniedOthers)
	}
	fmt.Fprintf(w, "  %s tried hosts its policy does not allow: %s%s; allow with %s\n", i.ID, strings.Join(hosts, ", "), more, strings.Join(fixes, " "))
}

// writeHeld names the items the lock holds for approval, and the
// commands that show and approve them. An item's name is the server's
// text: its invisible characters and line breaks are spelt out (as pins
// shows them), so that it cannot pass for a line of the status.
func writeHeld(w io.Writer, server string, i daemon.InstanceStatus) {
	if len(i.Held) == 0 {
		return
	}
	items := make([]string, len(i.Held))
	for k, h := range i.Held {
		items[k] = oneLineVisible.Replace(visible(h.Item)) + " (" + h.Reason + ")"
	}
	fmt.Fprintf(w, "  %s holds for approval: %s; see mcpsandbox pins diff %s\n", i.ID, strings.Join(items, ", "), cmdline.ShellWord(server))
}

// oneLineVisible spells out the line breaks and tabs visible keeps.
var oneLineVisible = strings.NewReplacer("\n", `\u000a`, "\t", `\u0009`)

func orDash(ok bool, s string) string {
	if !ok {
		return "-"
	}
	return s
}

func round(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return d.Round(time.Minute).String()
	case d >= time.Minute:
		return d.Round(time.Second).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

func mib(b uint64) string { return fmt.Sprintf("%.1fMiB", float64(b)/(1<<20)) }

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
