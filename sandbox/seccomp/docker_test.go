package seccomp

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testdata/small.json exercises the Docker format: unknown names,
// the single-name form, repeated-index args (either value), a masked clone
// rule, errnoRet, and includes/excludes by caps, arch and kernel version.
func TestSeccompDockerProfileBehaviour(t *testing.T) {
	want := map[string]string{
		"getpid": "ok", "open_read": "ok", "mmap_exec": "ok",
		"socket_unix": "ok", "socket_netlink_route": "ok", "socket_inet": "EPERM",
		"personality_query": "ok", "personality_odd": "EPERM",
		"clone_newuser": "EPERM", "io_uring_setup": "EPERM",
		"mkdir":            "EACCES", // errnoRet
		"ptrace":           "EPERM",  // includes.caps: the server has none
		"chroot":           "EPERM",  // includes.minKernel 99.0
		"kcmp":             "EPERM",  // excludes.arches: this arch
		"process_vm_readv": "ok",     // excludes.caps: applies, so allowed
		// newer than any call the profile names (pidfd_open): ENOSYS
		"fchmodat2": "ENOSYS", "clone3": "ENOSYS",
	}
	prog := compileOrFail(t, "testdata/small.json", unixOnly, false)
	checkResults(t, probeCalls(t, prog, slices.Sorted(maps.Keys(want))), want)

	// The network setting is the profile's business, not added on top.
	prog = compileOrFail(t, "testdata/small.json", withInet, false)
	checkResults(t, probeCalls(t, prog, []string{"socket_inet"}), map[string]string{"socket_inet": "EPERM"})
}

func TestSeccompDockerProfileLogDenials(t *testing.T) {
	want := map[string]string{
		"getpid": "ok", "socket_inet": "ok", "mkdir": "ENOENT", "ptrace": "ESRCH",
		"chroot": "ENOENT", "kcmp": "ok",
		"fchmodat2": "ENOSYS", "clone3": "ENOSYS", // ENOSYS answers stay
	}
	prog := compileOrFail(t, "testdata/small.json", unixOnly, true)
	checkResults(t, probeCalls(t, prog, slices.Sorted(maps.Keys(want))), want)
}

func TestSeccompDockerProfileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rule := func(r string) string {
		return `{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [` + r + `]}`
	}
	cases := []struct {
		name, path string
		want       []string // substrings of the error
	}{
		{"syntax", "testdata/malformed.json",
			[]string{"testdata/malformed.json:4:52:", "invalid JSON"}},
		{"unknown action", "testdata/badaction.json",
			[]string{"badaction.json:5:3:", "syscalls[1] (getpid)", `unknown action "SCMP_ACT_ALOW"`, "SCMP_ACT_ALLOW"}},
		{"wrong type", write("type.json", "{\n  \"defaultAction\": 5\n}"),
			[]string{"type.json:2:", "defaultAction must be a string"}},
		{"no default action", write("nodefault.json", `{"syscalls": []}`),
			[]string{"nodefault.json", "defaultAction is missing"}},
		{"bad default action", write("baddefault.json", `{"defaultAction": "SCMP_ACT_DENY"}`),
			[]string{"defaultAction", `unknown action "SCMP_ACT_DENY"`}},
		{"unknown op", write("op.json", rule(`{"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": 1, "op": "SCMP_CMP_EQUAL"}]}`)),
			[]string{"syscalls[0] (read)", `unknown op "SCMP_CMP_EQUAL"`, "SCMP_CMP_EQ"}},
		{"arg index", write("index.json", rule(`{"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 6, "value": 1, "op": "SCMP_CMP_EQ"}]}`)),
			[]string{"index 6 is out of range"}},
		{"notify", write("notify.json", rule(`{"names": ["read"], "action": "SCMP_ACT_NOTIFY"}`)),
			[]string{"SCMP_ACT_NOTIFY needs a seccomp agent"}},
		{"no names", write("nonames.json", rule(`{"action": "SCMP_ACT_ALLOW"}`)),
			[]string{"syscalls[0]", "no syscall names"}},
		{"min kernel", write("kernel.json", rule(`{"names": ["read"], "action": "SCMP_ACT_ALLOW", "includes": {"minKernel": "six"}}`)),
			[]string{`minKernel "six"`, "MAJOR.MINOR"}},
		{"errno range", write("errno.json", rule(`{"names": ["read"], "action": "SCMP_ACT_ERRNO", "errnoRet": 5000}`)),
			[]string{"errnoRet 5000"}},
		{"missing file", filepath.Join(dir, "nope.json"),
			[]string{"nope.json", `neither "default" nor a readable`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compile(c.path, unixOnly, false)
			if err == nil {
				t.Fatal("compiled; want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// A rule repeating the default action (common in hand-written profiles) is
// harmless, as in Docker; libseccomp alone would refuse it.
func TestSeccompDockerProfileRuleEqualToDefault(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.json")
	body := `{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
		{"names": ["read"], "action": "SCMP_ACT_ALLOW"},
		{"names": ["ptrace"], "action": "SCMP_ACT_ERRNO"}]}`
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := compileOrFail(t, p, unixOnly, false)
	// A deny-list profile gets no ENOSYS answer: new calls stay allowed.
	want := forThisKernel(t, map[string]string{"ptrace": "EPERM", "getpid": "ok", "fchmodat2": "ENOENT", "clone3": "EINVAL"})
	checkResults(t, probeCalls(t, prog, slices.Sorted(maps.Keys(want))), want)
}

func TestSeccompDockerProfileTooLarge(t *testing.T) {
	var rules []string
	for i := range 5000 { // about one instruction each
		rules = append(rules, `{"names": ["personality"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": `+strconv.Itoa(i*7)+`, "op": "SCMP_CMP_EQ"}]}`)
	}
	p := filepath.Join(t.TempDir(), "big.json")
	body := `{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [` + strings.Join(rules, ",\n") + `]}`
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Compile(p, unixOnly, false)
	if err == nil || !strings.Contains(err.Error(), "over the kernel's limit of 4096") {
		t.Fatalf("compiling 5000 argument rules: %v; want the instruction limit named", err)
	}
}
