package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/fstest"
	"time"
)

// builtins stands in for package policies, which this leaf may not import.
var builtins = fstest.MapFS{
	"default.yaml": {Data: []byte("limits:\n  memory: 1GiB\n")},
	"small.yaml":   {Data: []byte("limits:\n  memory: 256MiB\n  pids: 32\nfilesystem:\n  ro: [/usr/share/base]\n")},
}

var testVars = Vars{Home: "/home/ann", WorkDir: "/work/proj", Args: []string{"--root", "/data/notes"}, State: "/state/ann"}

// writeFiles writes name → content under a new directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func load(t *testing.T, dir, ref string) (Policy, Origin, error) {
	t.Helper()
	if IsFile(ref) {
		ref = filepath.Join(dir, ref)
	}
	return Loader{Builtin: builtins, Vars: testVars}.Load(ref)
}

func TestAFileSetsItsKeysOverTheDefaults(t *testing.T) {
	dir := writeFiles(t, map[string]string{"p.yaml": `
unconfined: false
filesystem:
  ro: [/etc/ssl]
  rw:
    - ${PWD}/out
network: {mode: host}
env:
  pass: [GITHUB_TOKEN]
  set:
    PROMPT: "$$ "
    DIR: ${HOME}/x
    DATA: ${STATE}/data
state: {dir: true, env: MCP_STATE_DIR}
limits:
  memory: 512MiB
  cpu: 1.5
  pids: 64
  nofile: 4096
health:
  ping-interval: 0
restart:
  backoff: 1s..1m
  mode: never
user:
  name: nobody
log: {level: debug, file: "${HOME}/mcp.log"}
mcp:
  allow-tools: [read_*, "list_?"]
  deny-tools: [read_secret]
  call-timeout: 30s
  deny-prompts: [secret-*]
  allow-resources: ["demo://resource/static/*"]
  rate-limits: [60/1m, "write_*=5/1m"]
  max-concurrent-calls: 4
audit:
  file: "${HOME}/audit.log"
  max-size: 1MiB
  mask: ["pin*"]
`})
	p, origin, err := load(t, dir, "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.ReadOnly = []string{"/etc/ssl"}
	want.ReadWrite = []string{"/work/proj/out"}
	want.Net = NetHost
	want.Env = []string{"GITHUB_TOKEN", "PROMPT=$ ", "DIR=/home/ann/x", "DATA=/state/ann/data"}
	want.State, want.StateEnv = true, "MCP_STATE_DIR"
	want.Memory, want.CPU, want.Pids, want.NoFile = 512*MiB, 1.5, 64, 4096
	want.PingInterval = 0
	want.RestartBackoff = Backoff{time.Second, time.Minute}
	want.Restart, want.User = RestartNever, "nobody"
	want.LogLevel, want.LogFile = "debug", "/home/ann/mcp.log"
	want.AllowTools, want.DenyTools = []string{"read_*", "list_?"}, []string{"read_secret"}
	want.CallTimeout = 30 * time.Second
	want.AuditLog, want.AuditMaxSize, want.AuditMask = "/home/ann/audit.log", MiB, []string{"pin*"}
	want.DenyPrompts, want.AllowResources = []string{"secret-*"}, []string{"demo://resource/static/*"}
	want.RateLimits, want.MaxConcurrentCalls = []string{"60/1m", "write_*=5/1m"}, 4
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got\n%+v\nwant\n%+v", p, want)
	}
	if got := origin["Memory"]; got.Line != 16 || got.Col != 3 || got.File != filepath.Join(dir, "p.yaml") {
		t.Errorf("origin of Memory = %v, want p.yaml:16:3", got)
	}
	if _, ok := origin["Grace"]; ok {
		t.Error("origin names Grace, which the file does not set")
	}
}

// extends: a built-in or a file relative to the extending file; the
// extending file's values win, lists add up, origins are the last setter.
func TestExtendsAppliesTheBaseFirst(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"team/base.yaml": "extends: small\nlimits:\n  pids: 48\nfilesystem:\n  ro: [/opt/team]\n",
		"me.yaml":        "extends: team/base.yaml\nlimits:\n  pids: 100\nfilesystem:\n  ro: [\"${ARG2}\"]\n",
	})
	p, origin, err := load(t, dir, "me.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Memory != 256*MiB || p.Pids != 100 {
		t.Errorf("memory %v pids %d, want 256MiB (small) and 100 (me.yaml)", p.Memory, p.Pids)
	}
	if want := []string{"/usr/share/base", "/opt/team", "/data/notes"}; !reflect.DeepEqual(p.ReadOnly, want) {
		t.Errorf("ro = %q, want %q", p.ReadOnly, want)
	}
	if o := origin["Memory"]; o.File != "built-in small" || o.Line != 2 {
		t.Errorf("origin of Memory = %v, want built-in small:2", o)
	}
	if o := origin["Pids"]; o.File != filepath.Join(dir, "me.yaml") {
		t.Errorf("origin of Pids = %v, want me.yaml", o)
	}
}

// LoadChain names what it applied, the policy asked for first.
func TestLoadChainNamesEachPolicyApplied(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"team/base.yaml": "extends: small\n",
		"me.yaml":        "extends: team/base.yaml\n",
	})
	me := filepath.Join(dir, "me.yaml")
	_, _, chain, err := Loader{Builtin: builtins, Vars: testVars}.LoadChain(me)
	if want := []string{me, filepath.Join(dir, "team/base.yaml"), "built-in small"}; err != nil || !reflect.DeepEqual(chain, want) {
		t.Errorf("chain = %q, %v; want %q", chain, err, want)
	}
}

func TestArgsExpandsToEveryArgument(t *testing.T) {
	dir := writeFiles(t, map[string]string{"p.yaml": "filesystem:\n  ro: [/a, \"${ARGS}\", /b]\n"})
	p, _, err := load(t, dir, "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/a", "--root", "/data/notes", "/b"}; !reflect.DeepEqual(p.ReadOnly, want) {
		t.Errorf("ro = %q, want %q", p.ReadOnly, want)
	}
}

func TestAnEmptyFileIsTheDefault(t *testing.T) {
	dir := writeFiles(t, map[string]string{"e.yaml": "# nothing yet\n", "s.yaml": "limits:\nlog:\n"})
	for _, f := range []string{"e.yaml", "s.yaml"} {
		p, origin, err := load(t, dir, f)
		if err != nil || !reflect.DeepEqual(p, Default()) || len(origin) != 0 {
			t.Errorf("%s: %+v %v %v; want the default", f, p, origin, err)
		}
	}
}
