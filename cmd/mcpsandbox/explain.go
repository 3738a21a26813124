package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/resolve"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// policyExplain is `mcpsandbox policy explain [run's options] -- COMMAND`:
// what run would apply to COMMAND, for a person to read. It starts nothing;
// it resolves through runPolicy, as run does, so the two cannot disagree.
func policyExplain(args []string, std stdio) int {
	r, status, ok := runPolicy("policy", args, std)
	if !ok {
		return status
	}
	e := explanation{r: r, p: r.Policy, d: sandbox.Describe(specOf(r)), out: std.Out}
	e.write()
	return exitOK
}

// specOf is what run would ask the sandbox to start for r.
func specOf(r resolve.Resolution) sandbox.Spec {
	return supervisor.SpecOf(r.Launch.Name, r.Policy, r.StateDir(), r.Host.LookupEnv)
}

type explanation struct {
	r   resolve.Resolution
	p   policy.Policy
	d   sandbox.Description // what the sandbox says it will do
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
	if len(e.d.Problems) > 0 {
		e.section("Start", e.problemLines()...)
	}
	if e.p.Unconfined {
		e.section("Confinement", "none (unconfined): the server runs as you, with your files,",
			"network and whole environment; no limits, no seccomp")
	} else {
		e.section("Mounts", e.mountLines()...)
	}
	e.section("Environment", e.envLines()...)
	if !e.p.Unconfined {
		e.section("Network", e.networkLines()...)
		e.section("Limits", e.limitLines()...)
		e.section("Seccomp", e.seccompLines()...)
		e.section("Landlock", e.d.Landlock...)
		e.section("User", e.d.User+e.userFrom())
	}
	e.section("MCP rules", e.settingsWhere("mcp", func(k policy.Key) bool { return !inApproval(k) })...)
	e.section("Approval", e.approvalLines()...)
	e.section("Server requests", e.serverRequestLines()...)
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
	lines := []string{"given: " + cmdline.ShellJoin(l.Given)}
	if rt := l.Runtime; rt.Shim != "" && !p.Unconfined {
		lines = append(lines, fmt.Sprintf("%s → %s (%s shim)", l.Given[0], rt.Exe, rt.Via))
	}
	if exe := e.d.Exe; exe == "" {
		lines = append(lines, p.Command[0]+": not found on your PATH: the start will fail")
	} else if !slices.Equal(p.Command, l.Given) || exe != p.Command[0] {
		lines = append(lines, "runs: "+cmdline.ShellJoin(append([]string{exe}, p.Command[1:]...)))
	}
	return lines
}

// problemLines are what the sandbox would refuse at the start, in run's
// words.
func (e explanation) problemLines() []string {
	lines := []string{"the start would fail:"}
	for _, err := range e.d.Problems {
		lines = append(lines, "  "+field.Message(err, flagOf))
	}
	return lines
}

func (e explanation) serverLines() []string {
	lines := []string{"name: " + e.r.Launch.Name, "  from " + e.r.Launch.NameWhy}
	dir := e.r.StateDir()
	if dir == "" {
		return append(lines, "state directory: off"+e.from("State"))
	}
	lines = append(lines, "state directory: "+dir+" (read-write, kept)")
	if f := e.r.FormerState(); f.Move {
		lines = append(lines, "  "+f.Dir+" moves there at the first start: "+f.Why)
	} else if f.Dir != "" {
		lines = append(lines, "  "+f.Dir+" (its former name) stays: "+f.Why)
	}
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

// envLines name the server's whole environment as the sandbox makes it,
// with the values of variables passed from yours, and of secret-looking
// ones, left out.
func (e explanation) envLines() []string {
	passed := map[string]bool{} // the policy's last word on a name is a bare NAME
	for _, kv := range e.p.Env {
		name, _, isSet := strings.Cut(kv, "=")
		passed[name] = !isSet
	}
	var lines []string
	env := e.d.Env
	if e.p.Unconfined {
		lines = append(lines, "your whole environment, and:")
		env = specOf(e.r).Env
	}
	seen := map[string]bool{}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		seen[name] = true
		switch {
		case passed[name]:
			lines = append(lines, name+" from your environment")
		case secretName(name):
			lines = append(lines, name+"=*** (hidden: the name looks secret)")
		default:
			lines = append(lines, kv)
		}
	}
	for _, kv := range e.p.Env {
		if !strings.Contains(kv, "=") && !seen[kv] {
			seen[kv] = true
			lines = append(lines, kv+" from your environment (not set now: left out)")
		}
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

func (e explanation) seccompLines() []string {
	return append([]string{"profile: " + e.p.Seccomp + e.from("Seccomp")}, e.d.Seccomp...)
}

// userFrom says where a user given by name came from.
func (e explanation) userFrom() string {
	if e.p.User == "" {
		return ""
	}
	return e.from("User")
}

// limitLines are the sandbox's limits, with where each value came from,
// and the relay's largest message.
func (e explanation) limitLines() []string {
	var lines []string
	for _, l := range e.d.Limits {
		lines = append(lines, e.setting(keyName(l.Field), []string{l.Value}, e.source(l.Field))...)
	}
	return append(lines, e.setting(keyName("MaxMessage"), []string{e.p.MaxMessage.String()}, e.source("MaxMessage"))...)
}

// keyName is a field's key within its section (limits.memory: memory);
// a sandbox setting no policy key sets (CPUWeight) is named as a key
// would be (cpu-weight).
func keyName(field string) string {
	for _, k := range policy.Keys() {
		if k.Field == field {
			return k.Name
		}
	}
	var b strings.Builder
	rs := []rune(field)
	for i, r := range rs {
		// A word starts at an upper-case letter after a lower-case one, or
		// before one (the W of CPUWeight).
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
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
