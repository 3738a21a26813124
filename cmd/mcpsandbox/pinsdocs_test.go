package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/lock"
)

var consoleBlock = regexp.MustCompile("(?s)```console\n(.*?)```")

// docs/pins.md's sessions run as written, printing exactly what it shows,
// from a HOME (/home/you in the page) whose lock is the page's story: the
// memory server pinned, its next version's changes held.
func TestPinsDocsRunAsWritten(t *testing.T) {
	home, sh := pinsHome(t)
	writeMemoryLock(t, filepath.Join(home, ".config/mcpsandbox/lock.json"))
	text, err := os.ReadFile("../../docs/pins.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := consoleBlock.FindAllStringSubmatch(string(text), -1)
	if len(blocks) < 4 {
		t.Fatalf("docs/pins.md has %d console blocks, want list, diff, approve and verify", len(blocks))
	}
	for _, b := range blocks {
		line, want, ok := strings.Cut(b[1], "\n")
		if !strings.HasPrefix(line, "$ mcpsandbox ") || !ok {
			t.Fatalf("a console block of docs/pins.md does not start with one $ mcpsandbox line:\n%s", b[1])
		}
		line = strings.TrimPrefix(line, "$ ")
		out, code := sh(line)
		out = strings.ReplaceAll(out, home, "/home/you")
		if out != want {
			t.Errorf("%s prints\n%s\ndocs/pins.md shows\n%s", line, out, want)
		}
		wantCode := exitOK
		if strings.Contains(want, "drifted from") {
			wantCode = exitFailure
		}
		if code != wantCode {
			t.Errorf("%s: exit %d, want %d", line, code, wantCode)
		}
	}
}

// The examples of `mcpsandbox help pins` work as written: the user's lock,
// a project's (nothing held, so verify passes) and a daemon's.
func TestPinsHelpExamplesRunAsWritten(t *testing.T) {
	home, sh := pinsHome(t)
	writeMemoryLock(t, filepath.Join(home, ".config/mcpsandbox/lock.json"))
	writeMemoryLock(t, filepath.Join(home, "mcpsandbox.lock.json"))
	if err := lock.Update(filepath.Join(home, "mcpsandbox.lock.json"), func(f *lock.File) error {
		f.Servers[memoryID].Pending = lock.Contract{}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	fs := listItems(t, `{"tools": [{"name": "read_text_file", "description": "Read a file", "inputSchema": {"type": "object"}}]}`)
	if err := lock.Update(filepath.Join(home, ".config/mcpsandbox/daemon.lock.json"), func(f *lock.File) error {
		s := &lock.Server{Name: "notes"}
		s.Contract.Put(fs[0], lock.Entry{})
		f.Servers["npm+@modelcontextprotocol+server-filesystem"] = s
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	pinsOwn(t, home)
	checks := map[string][]string{
		"list":    {"    held     tool:export_graph (new), tool:read_graph (changed), tool:search_nodes (changed)"},
		"diff":    {"tool:search_nodes changed", "  finding: " + memoryFinding},
		"approve": {"approved tool:export_graph (new) for " + memoryName},
		"verify":  {"ok: ./mcpsandbox.lock.json pins 1 server, nothing held"},
	}
	lists := 0
	for _, line := range helpExamples(t, "pins") {
		sub := strings.Fields(line)[2]
		out, code := sh(line)
		if code != exitOK {
			t.Errorf("%s: exit %d\n%s", line, code, out)
		}
		if sub == "list" {
			lists++
		}
		if sub == "list" && lists == 2 {
			wantLines(t, line, out, "notes (npm+@modelcontextprotocol+server-filesystem)", "        tool:read_text_file  "+fs[0].Hash)
			continue
		}
		wantLines(t, line, out, checks[sub]...)
		delete(checks, sub)
	}
	if len(checks) > 0 {
		t.Errorf("subcommands without an example: %v", checks)
	}
	f, err := lock.Load(filepath.Join(home, ".config/mcpsandbox/lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Servers[memoryID].Contract.Get(contract.Tool, "export_graph"); !ok {
		t.Error("the approve example did not approve export_graph in the user's lock")
	}
}

// pinsHome is a HOME for the pins examples and a shell that runs a line
// there as its owner, output and errors together, with mcpsandbox on PATH.
// Root's own lock is /etc's: as root the lines run as an unprivileged
// user, whose lock is in HOME as a user's is. MCPSANDBOX_LOCK names that
// same lock, so that no lock of the test binary's own stands in for it.
func pinsHome(t *testing.T) (string, func(line string) (string, int)) {
	t.Helper()
	root := testenv.SharedDir(t, "mcpsandbox-pins-")
	home, bin := filepath.Join(root, "home"), filepath.Join(root, "bin")
	exe := self(t)
	if os.Geteuid() == 0 {
		exe = testenv.SelfForOthers(t)
	}
	writeTree(t, root, map[string]string{"home/.keep": "", "bin/mcpsandbox": "#!/bin/sh\nexec " + exe + " " + asCLI + " \"$@\"\n"})
	if err := os.Chmod(filepath.Join(bin, "mcpsandbox"), 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "PATH="+bin+":"+os.Getenv("PATH"), "MCPSANDBOX_LOCK="+filepath.Join(home, ".config/mcpsandbox/lock.json"))
	owned := false
	return home, func(line string) (string, int) {
		t.Helper()
		if !owned { // the test's locks are written by now
			pinsOwn(t, home)
			owned = true
		}
		cmd := exec.Command("sh", "-c", line+" 2>&1")
		cmd.Dir, cmd.Env = home, env
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: testenv.UnprivUID, Gid: testenv.UnprivUID}}
		}
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return string(out), code
	}
}

// pinsOwn gives HOME's files to the user the examples run as.
func pinsOwn(t *testing.T, home string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	err := filepath.Walk(home, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, testenv.UnprivUID, testenv.UnprivUID)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// README's Pins section's lines work as written on the page's story: the
// diff shows the held tool, the approve approves it.
func TestPinsReadmeRunsAsWritten(t *testing.T) {
	home, sh := pinsHome(t)
	writeMemoryLock(t, filepath.Join(home, ".config/mcpsandbox/lock.json"))
	wants := map[string]string{"diff": "tool:export_graph added", "approve": "approved tool:export_graph (new) for " + memoryName}
	for _, line := range readmeShLines(t, "Pins") {
		out, code := sh(line)
		want, known := wants[strings.Fields(line)[2]]
		if code != exitOK || !known || !strings.Contains(out, want+"\n") {
			t.Errorf("%s: exit %d, want a line %q:\n%s", line, code, want, out)
		}
	}
}

// readmeShLines are the lines of the first sh block of README's section
// "## heading".
func readmeShLines(t *testing.T, heading string) []string {
	t.Helper()
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(text), "\n## "+heading+"\n")
	section, _, _ = strings.Cut(section, "\n## ")
	block := shBlock.FindStringSubmatch(section)
	if !ok || block == nil {
		t.Fatalf("README has no %s section with an sh block", heading)
	}
	return strings.Split(strings.TrimSpace(block[1]), "\n")
}
