package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/resolve"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
	"github.com/mcpsandbox/mcpsandbox/sandbox/seccomp"
)

// policyExplain is `mcpsandbox policy explain [run's options] -- COMMAND`:
// what run would apply to COMMAND, for a person to read. It starts nothing;
// it resolves through runPolicy, as run does, so the two cannot disagree.
func policyExplain(args []string, std stdio) int {
	r, status, ok := runPolicy("policy", args, std)
	if !ok {
		return status
	}
	e := explanation{r: r, p: r.Policy, out: std.Out}
	e.write()
	return exitOK
}

// What every sandbox has (package sandbox and its init stage), said once
// here rather than exported from there for a printout.
const (
	sandboxHome   = "/sandbox"
	sandboxPath   = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
	defaultFilter = "Docker's allowlist less calls needing capabilities"
)

var sandboxBase = []string{
	"always: /usr and a minimal /etc, read-only",
	"always: a fresh /proc (parts masked), a minimal /dev, /sys with its cgroup only",
}

type explanation struct {
	r   resolve.Resolution
	p   policy.Policy
	out io.Writer
}

func (e explanation) section(title string, lines ...string) {
	fmt.Fprintln(e.out, title)
	for _, l := range lines {
		fmt.Fprintln(e.out, "  "+l)
	}
	fmt.Fprintln(e.out)
}

func (e explanation) write() {
	e.section("Policy", e.policyLines()...)
	e.section("Command", e.commandLines()...)
	e.section("Server", e.serverLines()...)
	if e.p.Unconfined {
		e.section("Confinement", "none (unconfined): the server runs as you, with your files,",
			"network and whole environment; no limits, no seccomp")
	} else {
		e.section("Mounts", e.mountLines()...)
	}
	e.section("Environment", e.envLines()...)
	if !e.p.Unconfined {
		e.section("Network", e.networkLine())
		e.section("Limits", e.settings("limits")...)
		e.section("Seccomp", e.seccompLines()...)
		e.section("User", e.userLine())
	}
	e.section("MCP rules", e.settings("mcp")...)
	if e.p.AuditLog == "" {
		e.section("Audit log", "off"+e.from("AuditLog"))
	} else {
		e.section("Audit log", e.settings("audit")...)
	}
	e.section("Health", e.healthLine())
	e.section("Restart", e.restartLine())
}

func (e explanation) policyLines() []string {
	r := e.r
	var lines []string
	switch {
	case r.Chosen:
		lines = append(lines, "built-in "+r.Ref+", chosen by the command:", "  "+r.Launch.Choice.Why)
	case policy.IsFile(r.Ref):
		lines = append(lines, "the file "+r.Ref+" (--policy)")
	default:
		lines = append(lines, "built-in "+r.Ref+" (--policy)")
	}
	if len(r.Chain) > 1 {
		lines = append(lines, "extends: "+strings.Join(r.Chain[1:], " → "))
	}
	return lines
}

func (e explanation) commandLines() []string {
	l, p := e.r.Launch, e.p
	lines := []string{"given: " + shellJoin(l.Given)}
	if rt := l.Runtime; rt.Shim != "" && !p.Unconfined {
		lines = append(lines, fmt.Sprintf("%s → %s (%s shim)", l.Given[0], rt.Exe, rt.Via))
	}
	if exe, err := exec.LookPath(p.Command[0]); err != nil {
		lines = append(lines, p.Command[0]+": not found on your PATH: the start will fail")
	} else if !slices.Equal(p.Command, l.Given) || exe != p.Command[0] {
		lines = append(lines, "runs: "+shellJoin(append([]string{exe}, p.Command[1:]...)))
	}
	return lines
}

func (e explanation) serverLines() []string {
	lines := []string{"name: " + e.r.Launch.Name}
	dir := e.r.StateDir()
	if dir == "" {
		return append(lines, "state directory: off"+e.from("State"))
	}
	lines = append(lines, "state directory: "+dir+" (read-write, kept)")
	var names []string
	for _, kv := range e.p.Env {
		if name, v, ok := strings.Cut(kv, "="); ok && strings.Contains(v, dir) {
			names = append(names, name)
		}
	}
	if len(names) > 0 {
		lines = append(lines, "named by: "+strings.Join(names, ", "))
	}
	return lines
}

// grant is one mount of the host's files, and why it is there.
type grant struct{ kind, path, why, covers string }

func (e explanation) grants() []grant {
	r, p := e.r, e.p
	var out []grant
	for _, g := range r.Grants {
		kind := "ro"
		if g.Writable {
			kind = "rw"
		}
		var covers string
		for _, c := range g.Covers {
			covers += " — covers " + e.covered(c, g)
		}
		out = append(out, grant{kind, g.Path, e.askers(g), covers})
	}
	if dir := r.StateDir(); dir != "" {
		out = append(out, grant{"rw", dir, "the state directory", ""})
	}
	if exe := e.executable(); exe != "" && !within(exe, "/usr") && !slices.ContainsFunc(out, func(g grant) bool { return within(exe, g.path) }) {
		out = append(out, grant{"ro", exe, "the program itself", ""})
	}
	for _, t := range p.Tmpfs {
		why := "filesystem.tmpfs"
		if slices.Contains(r.Overrides.Tmpfs, t) {
			why = "--tmpfs"
		}
		out = append(out, grant{"tmpfs", t, why + ", empty, " + p.TmpSize.String(), ""})
	}
	return out
}

// askers says who asked for g, each once.
func (e explanation) askers(g resolve.Grant) string {
	field := listField(g.Writable)
	var why []string
	for _, s := range g.From {
		var w string
		switch s.Kind {
		case resolve.Given:
			w = flagOf(field)
		case resolve.Launch:
			w = s.Name
		case resolve.Builtin:
			if g.Path == e.r.Launch.Project {
				w = "the script's project, ${PROJECT}"
				break
			}
			fallthrough
		default:
			w = policy.KeyOf(field)
		}
		if !slices.Contains(why, w) {
			why = append(why, w)
		}
	}
	return strings.Join(why, "; ")
}

// listField is the Policy field of a read-only or read-write grant.
func listField(writable bool) string {
	if writable {
		return "ReadWrite"
	}
	return "ReadOnly"
}

// covered says which automatic grant c the user's grant g stands in for.
func (e explanation) covered(c, g resolve.Grant) string {
	mode := "read-only"
	if c.Writable {
		mode = "read-write"
	}
	var what string
	switch s := c.From[0]; {
	case s.Kind == resolve.Launch:
		what = s.Name
	case c.Path == e.r.Launch.Project:
		what = "the script's project"
	default:
		what = s.Name + "'s " + policy.KeyOf(listField(c.Writable))
	}
	s := "the automatic " + mode + " grant of " + what
	if c.Path != g.Path {
		s += ", " + quoteArg(c.Path)
	}
	return s
}

// executable is where the sandbox finds the program: on the PATH, links
// resolved ("" if it is not found).
func (e explanation) executable() string {
	exe, err := exec.LookPath(e.p.Command[0])
	if err != nil {
		return ""
	}
	if abs, err := filepath.Abs(exe); err == nil {
		exe = abs
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		return real
	}
	return exe
}

func (e explanation) mountLines() []string {
	var lines []string
	gs := e.grants()
	for _, g := range gs {
		lines = append(lines, fmt.Sprintf("%-5s %s  (%s)%s", g.kind, quoteArg(g.path), g.why, g.covers))
	}
	if len(gs) == 0 {
		lines = append(lines, "no files of the host")
	}
	noexec := ""
	if e.p.NoExecTmp {
		noexec = ", noexec"
	}
	size := e.p.TmpSize.String()
	lines = append(lines,
		"/tmp and /dev/shm: private, "+size+" each"+noexec,
		"HOME: "+sandboxHome+", private, "+size+noexec)
	wd := e.p.WorkDir
	switch held := e.holder(wd, gs); {
	case wd == "":
		lines = append(lines, "working directory: HOME")
	case held != "":
		lines = append(lines, "working directory: "+wd+" (in the "+held+" grant)")
	default:
		lines = append(lines, "working directory: "+wd+" (empty: no grant holds it)")
	}
	return append(lines, sandboxBase...)
}

func (e explanation) holder(dir string, gs []grant) string {
	for _, g := range gs {
		if dir != "" && within(dir, g.path) {
			return g.kind
		}
	}
	return ""
}

func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// envLines name the server's whole environment: the sandbox's PATH, HOME
// and LANG unless the policy sets them, then the policy's, the last of a
// name winning as at the start.
func (e explanation) envLines() []string {
	var names []string
	entries := map[string]string{}
	set := func(name, line string) {
		if _, ok := entries[name]; !ok {
			names = append(names, name)
		}
		entries[name] = line
	}
	var lines []string
	if e.p.Unconfined {
		lines = append(lines, "your whole environment, and:")
	} else {
		set("PATH", "PATH="+sandboxPath)
		set("HOME", "HOME="+sandboxHome)
		set("LANG", "LANG=C.UTF-8")
	}
	for _, kv := range e.p.Env {
		name, _, isSet := strings.Cut(kv, "=")
		switch {
		case !isSet:
			line := name + " from your environment"
			if _, now := os.LookupEnv(name); !now {
				line += " (not set now: left out)"
			}
			set(name, line)
		case secretName(name):
			set(name, name+"=*** (hidden: the name looks secret)")
		default:
			set(name, kv)
		}
	}
	for _, n := range names {
		lines = append(lines, entries[n])
	}
	if len(lines) == 0 {
		lines = append(lines, "nothing more")
	}
	return lines
}

// secretName: a variable whose value is not printed, erring on hiding.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, s := range []string{"TOKEN", "SECRET", "PASSW", "PASSPHRASE", "KEY", "AUTH", "CREDENTIAL", "COOKIE", "SESSION", "PRIVATE", "JWT", "BEARER", "DSN"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func (e explanation) networkLine() string {
	if e.p.Net == policy.NetHost {
		return "host: the host's network, its resolv.conf and hosts" + e.from("Net")
	}
	return "none: loopback only" + e.from("Net")
}

func (e explanation) seccompLines() []string {
	p := e.p
	lines := []string{"profile: " + p.Seccomp + e.from("Seccomp")}
	what := "a Docker/OCI profile"
	if p.Seccomp == policy.SeccompDefault {
		what = defaultFilter
	}
	if prog, err := seccomp.Program(p.Seccomp, p.Net == policy.NetHost, p.SeccompLog); err != nil {
		lines = append(lines, what, "cannot compile it: "+err.Error())
	} else {
		lines = append(lines, fmt.Sprintf("%s (%d BPF instructions)", what, len(prog)/8))
	}
	if ok, version, err := seccomp.Info(); ok {
		lines = append(lines, "enforced here (libseccomp "+version+")")
	} else {
		lines = append(lines, "not enforceable here: "+err.Error())
	}
	if p.SeccompLog {
		lines = append(lines, "refusals are logged and allowed (--seccomp-log)")
	}
	return lines
}

func (e explanation) userLine() string {
	switch {
	case os.Geteuid() != 0:
		return fmt.Sprintf("your uid %d, in a user namespace of its own%s", os.Getuid(), e.from("User"))
	case e.p.User != "":
		return e.p.User + e.from("User")
	case e.r.StateDir() != "":
		return fmt.Sprintf("a dynamic uid of its own (%d and up), the owner of its state directory", sandbox.DynamicIDFirst)
	default:
		return fmt.Sprintf("a dynamic uid of its own (%d and up), never root", sandbox.DynamicIDFirst)
	}
}

func (e explanation) healthLine() string {
	p := e.p
	if p.PingInterval == 0 {
		return "pings off" + e.from("PingInterval")
	}
	return fmt.Sprintf("ping every %s; hung after %d missed (%s each)", shortDuration(p.PingInterval), p.PingFailures, shortDuration(p.PingTimeout))
}

func (e explanation) restartLine() string {
	p := e.p
	if p.Restart == policy.RestartNever {
		return "never" + e.from("Restart")
	}
	most := "no limit"
	if p.MaxRestarts > 0 {
		most = fmt.Sprintf("at most %d in %s", p.MaxRestarts, shortDuration(p.RestartWindow))
	}
	return fmt.Sprintf("%s, after %s; %s", p.Restart, p.RestartBackoff, most)
}

// settings lists a policy-file section's keys with their values and where
// each came from, in the key table's order: a key added to the table is
// explained with no change here.
func (e explanation) settings(section string) []string {
	var lines []string
	for _, k := range policy.Keys() {
		if k.Section == section {
			lines = append(lines, fmt.Sprintf("%-13s %-10s (%s)", k.Name, e.value(k), e.source(k.Field)))
		}
	}
	return lines
}

// value is a field's value as its flag spells it; zero says what it means.
func (e explanation) value(k policy.Key) string {
	p := e.p
	f := reflect.ValueOf(&p).Elem().FieldByName(k.Field)
	if f.IsZero() || f.Kind() == reflect.Slice && f.Len() == 0 {
		switch {
		case strings.HasPrefix(k.Name, "allow-"):
			return "all"
		case k.Section == "limits":
			return "unlimited"
		}
		return "none"
	}
	if list, ok := f.Interface().([]string); ok {
		return strings.Join(list, ", ")
	}
	if d, ok := f.Interface().(time.Duration); ok {
		return shortDuration(d)
	}
	for _, rf := range runFlags {
		if rf.Field == k.Field {
			return rf.Value(&p).String()
		}
	}
	return fmt.Sprint(f.Interface())
}

// from says where a field's value came from, after two spaces: a flag, a
// policy file's key, or the default.
func (e explanation) from(field string) string {
	return "  (" + e.source(field) + ")"
}

func (e explanation) source(field string) string {
	if e.r.Given[field] {
		return flagOf(field)
	}
	pos, ok := e.r.Origin[field]
	switch {
	case !ok:
		return "default"
	case strings.HasPrefix(pos.File, "built-in "):
		return pos.File
	}
	return pos.File + ":" + strconv.Itoa(pos.Line)
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = quoteArg(a)
	}
	return strings.Join(q, " ")
}

// quoteArg quotes what a shell would split or expand.
func quoteArg(a string) string {
	if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}
