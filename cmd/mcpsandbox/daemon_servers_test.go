package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// daemonHost is a host's session through `mcpsandbox connect`, whichever
// SDK holds it.
type daemonHost interface {
	pid() int // the connect process's
	protocol() string
	tools() ([]string, error)
	call(tool string, args map[string]any) (text string, isError bool, err error)
	Close()
}

// realServer is a daemon entry of a real server and what its sessions do.
type realServer struct {
	name      string
	entry     daemonEntry
	policy    string // the built-in status must show ("" for none)
	stateless bool   // a Go SDK v1.8 server, which serves 2026-07-28 sessions
	tools     []string
	// try makes a call whose answer shows the server did the work; labels
	// are this session's so far, the last one new.
	try func(h daemonHost, labels []string) error
}

// hostKind is one way a host reaches a daemon's server.
type hostKind struct {
	name string
	// stateless: the session is 2026-07-28 against a server that has it;
	// classic ones always initialize.
	stateless bool
	connect   func(t *testing.T, d *e2eDaemon, server string) (daemonHost, error)
}

var (
	goClassic  = hostKind{"go-classic", false, goHostKind("2025-11-25")}
	goDefault  = hostKind{"go-default", true, goHostKind("")}
	tsV1       = hostKind{"ts-v1", false, tsHostKind("v1", "legacy")}
	tsV2Legacy = hostKind{"ts-v2-legacy", false, tsHostKind("v2", "legacy")}
	tsV2Auto   = hostKind{"ts-v2-auto", true, tsHostKind("v2", "auto")}
	tsV2Pin    = hostKind{"ts-v2-pin-2026-07-28", true, tsHostKind("v2", "2026-07-28")}
)

func goHostKind(version string) func(*testing.T, *e2eDaemon, string) (daemonHost, error) {
	return func(t *testing.T, d *e2eDaemon, server string) (daemonHost, error) {
		h, err := d.connectGo(t, server, version)
		if err != nil {
			return nil, err
		}
		return h, nil
	}
}

func tsHostKind(sdk, mode string) func(*testing.T, *e2eDaemon, string) (daemonHost, error) {
	return func(t *testing.T, d *e2eDaemon, server string) (daemonHost, error) {
		h, err := d.connectTS(t, sdk, mode, server)
		if err != nil {
			return nil, err
		}
		return h, nil
	}
}

// The reference npm servers (server-everything, server-filesystem and
// server-memory run by node at their installed path, server-memory by
// npx too, prepared and then offline) and a Go SDK v1.8 server, each a
// daemon entry under the built-in its launch line selects, reached through
// `mcpsandbox connect` by the Go SDK client and the TypeScript SDK v1 and
// v2 clients, in both session styles. Every session lists the tools, gets
// a real answer, has its server process killed, and carries on: status
// shows one restart and the next call is answered, by the new process.
func TestDaemonRealServersThroughConnect(t *testing.T) {
	requireConfinement(t)
	everything := testenv.NPMServer(t, "server-everything") // skips under -short
	filesystem := testenv.NPMServer(t, "server-filesystem")
	memory := testenv.NPMServer(t, "server-memory")
	tsClientDirs(t)
	base := newStateBase(t)
	prepared := base.prepare(t, "npx", "-y", memoryPkg)
	t.Logf("prepared npx %s in %v", memoryPkg, prepared.Round(time.Millisecond))

	granted := sandboxDir(t, "mcpsandbox-e2e-granted-")
	note := filepath.Join(granted, "note.txt")
	if err := os.WriteFile(note, []byte("written by the host for the server"), 0o644); err != nil {
		t.Fatal(err)
	}
	memoryTry := func(h daemonHost, labels []string) error {
		label := labels[len(labels)-1]
		entity := map[string]any{"name": label, "entityType": "e2e", "observations": []string{"made by " + label}}
		if text, isErr, err := h.call("create_entities", map[string]any{"entities": []any{entity}}); err != nil || isErr {
			return fmt.Errorf("create_entities: %q, %v", text, err)
		}
		text, isErr, err := h.call("read_graph", nil)
		if err != nil || isErr {
			return fmt.Errorf("read_graph: %q, %v", text, err)
		}
		for _, l := range labels { // the graph is in the state dir: it outlives a crash
			if !strings.Contains(text, "made by "+l) {
				return fmt.Errorf("read_graph lacks the entity %s made: %s", l, text)
			}
		}
		return nil
	}
	servers := []realServer{
		{name: "everything", entry: daemonEntry{"everything", map[string]any{"command": "node", "args": []string{everything}}},
			policy: "everything", tools: []string{"echo", "get-sum"},
			try: func(h daemonHost, labels []string) error {
				label := labels[len(labels)-1]
				text, isErr, err := h.call("echo", map[string]any{"message": label})
				if err != nil || isErr || !strings.Contains(text, label) {
					return fmt.Errorf("echo %s: %q, %v", label, text, err)
				}
				return nil
			}},
		{name: "filesystem", entry: daemonEntry{"filesystem", map[string]any{"command": "node", "args": []string{filesystem, granted}}},
			policy: "filesystem", tools: []string{"read_text_file", "list_directory", "write_file"},
			try: func(h daemonHost, labels []string) error {
				text, isErr, err := h.call("read_text_file", map[string]any{"path": note})
				if err != nil || isErr || text != "written by the host for the server" {
					return fmt.Errorf("read_text_file of the granted %s: %q, %v", note, text, err)
				}
				return nil
			}},
		{name: "memory", entry: daemonEntry{"memory", map[string]any{"command": "node", "args": []string{memory}}},
			policy: "memory", tools: []string{"create_entities", "read_graph"}, try: memoryTry},
		{name: "memory-npx", entry: daemonEntry{"memory-npx", map[string]any{"command": "npx", "args": []string{"-y", memoryPkg}}},
			policy: "memory", tools: []string{"create_entities", "read_graph"}, try: memoryTry},
		{name: "example", entry: exampleEntry(t, "example", nil), stateless: true, tools: []string{"echo", "instance"},
			try: func(h daemonHost, labels []string) error {
				label := labels[len(labels)-1]
				text, isErr, err := h.call("echo", map[string]any{"text": label})
				if err != nil || isErr || text != label {
					return fmt.Errorf("echo %s: %q, %v", label, text, err)
				}
				return nil
			}},
	}
	var entries []daemonEntry
	for _, s := range servers {
		entries = append(entries, s.entry)
	}
	d := startE2EDaemon(t, claudeConfig(t, entries...), base.env)
	st := d.status()
	for _, s := range servers {
		ss, ok := serverStatus(st, s.name)
		if !ok {
			t.Fatalf("status lacks server %s: %+v", s.name, st)
		}
		if s.policy != "" && ss.Policy != s.policy {
			t.Errorf("server %s runs under policy %q (%s), want the built-in %s", s.name, ss.Policy, ss.Why, s.policy)
		}
	}

	// The servers in parallel, each one's sessions in turn (two memory
	// instances at once would race on their one graph file).
	for _, s := range servers {
		kinds := []hostKind{goClassic, goDefault, tsV1, tsV2Legacy, tsV2Auto}
		if s.stateless {
			kinds = []hostKind{goDefault, tsV2Pin, tsV2Auto}
		}
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			for _, k := range kinds {
				t.Run(k.name, func(t *testing.T) {
					begin := time.Now()
					h, err := k.connect(t, d, s.name)
					if err != nil {
						t.Fatal(err)
					}
					defer h.Close()
					attached := time.Since(begin)
					wantStateless := k.stateless && s.stateless
					if got := h.protocol(); (got == "2026-07-28") != wantStateless || got == "" {
						t.Errorf("negotiated protocol %q; want %s", got, map[bool]string{true: "2026-07-28 (stateless)", false: "a classic one (initialize)"}[wantStateless])
					}
					tools, err := h.tools()
					if err != nil {
						t.Fatalf("tools/list: %v", err)
					}
					for _, want := range s.tools {
						if !slices.Contains(tools, want) {
							t.Errorf("tools/list lacks %s: %v", want, tools)
						}
					}
					labels := []string{"e2e-" + s.name + "-" + k.name}
					if err := s.try(h, labels); err != nil {
						t.Fatal(err)
					}

					inst := d.attachedInstance(h.pid())
					if !strings.HasPrefix(inst.ID, s.name+"#") || inst.Restarts != 0 || inst.Generation != 1 {
						t.Fatalf("the session's instance before the crash: %+v", inst)
					}
					crashed := time.Now()
					after := d.killServer(inst)
					restarted := time.Since(crashed)
					labels = append(labels, labels[0]+"-after-crash")
					if err := s.try(h, labels); err != nil {
						t.Fatalf("after the crash of %s's process %d: %v", inst.ID, inst.Pid, err)
					}
					now, ok := instanceOfClient(d.status(), h.pid())
					if !ok || now.ID != inst.ID || now.Restarts != 1 || now.Generation != 2 || now.Pid != after.Pid {
						t.Errorf("status after the crash and the next call: %+v; want %s with one restart, generation 2, pid %d", now, inst.ID, after.Pid)
					}
					if !strings.Contains(now.LastExit, "signal") && !strings.Contains(now.LastExit, "killed") {
						t.Errorf("last exit %q does not say the process was killed", now.LastExit)
					}
					t.Logf("%s: protocol %s, attached in %v; process %d killed (%s), %d answering %v later", inst.ID, h.protocol(), attached.Round(time.Millisecond), inst.Pid, now.LastExit, after.Pid, restarted.Round(time.Millisecond))
				})
			}
		})
	}
}
