package diagnose

import (
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// render names settings as fields, and policy-file keys as policy does.
func render(d Diagnosis) string { return d.Render(field.Plain, policy.KeyOf) }

// flag names settings as `run` flags do, for the ones these tests meet.
func flag(f string) string {
	return map[string]string{"ReadOnly": "--ro", "ReadWrite": "--rw", "Env": "--env", "Net": "--net", "User": "--user",
		"Command": "after --", "WorkDir": "--workdir"}[f]
}

// startStopsAtOnce checks that the stderr lines of a failed start are
// diagnosed as a permanent failure whose message names every want.
func startStopsAtOnce(t *testing.T, f Facts, stderr []string, want ...string) Diagnosis {
	t.Helper()
	d, ok := StartFailure(stderr, f)
	if !ok {
		t.Fatalf("no diagnosis of %q", stderr)
	}
	if !d.Permanent {
		t.Errorf("%v: not permanent, so the server would be restarted in vain", d)
	}
	msg := render(d)
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("diagnosis %q does not name %q", msg, w)
		}
	}
	return d
}

func nodeTrace(path string) []string {
	return []string{
		"node:internal/modules/cjs/loader:1210", "  throw err;", "  ^", "",
		"Error: Cannot find module '" + path + "'",
		"    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)",
		"    at Module._load (node:internal/modules/cjs/loader:1038:27)",
		"    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)",
		"    at node:internal/main/run_main_module:28:49 {", "  code: 'MODULE_NOT_FOUND',", "  requireStack: []", "}", "",
		"Node.js v20.20.2",
	}
}

// A python script whose directory is not granted: python says it cannot
// open it; the message says which path, that it is not granted and the
// grant (as a flag, and the policy-file key beside it).
func TestScriptNotGranted(t *testing.T) {
	script := "/home/ann/tools/server.py"
	f := Facts{Command: []string{"/usr/bin/python3", script}, FS: newFS().file(script, 0o644)}
	d := startStopsAtOnce(t, f, []string{"/usr/bin/python3: can't open file '" + script + "': [Errno 2] No such file or directory"},
		"could not open "+script, "not granted", "ReadOnly /home/ann/tools", "filesystem.ro")
	if d.Kind != NotGranted || d.Setting != "ReadOnly" || d.Path != script {
		t.Errorf("%+v", d)
	}
	if msg := d.Render(flag, policy.KeyOf); !strings.Contains(msg, "grant it with --ro /home/ann/tools (or filesystem.ro in a policy file)") {
		t.Errorf("rendered for run: %q", msg)
	}
	if msg := d.Render(policy.KeyOf, policy.KeyOf); strings.Contains(msg, "in a policy file") || !strings.Contains(msg, "grant it with filesystem.ro /home/ann/tools") {
		t.Errorf("rendered for a policy file: %q", msg)
	}
}

// A node package not granted: the grant named is the package's root, where
// node resolves its node_modules from.
func TestNodePackageNotGranted(t *testing.T) {
	entry := "/srv/pkg/dist/index.js"
	fsys := newFS().file("/srv/pkg/package.json", 0o644).file(entry, 0o644)
	startStopsAtOnce(t, Facts{Command: []string{"node", entry}, FS: fsys}, nodeTrace(entry),
		"could not open "+entry, "ReadOnly /srv/pkg ")
	dep := "/srv/app/node_modules/left-pad/index.js"
	fsys.file(dep, 0o644)
	startStopsAtOnce(t, Facts{Command: []string{"npx", "app"}, FS: fsys}, []string{"Error: Cannot find module '" + dep + "'"},
		"ReadOnly /srv/app ")
}

// A path granted through a symbolic link to somewhere not granted: the
// message says where the link leads.
func TestSymlinkOutOfTheGrant(t *testing.T) {
	fsys := newFS().file("/data/real/conf.json", 0o644).symlink("/srv/app/conf.json", "/data/real/conf.json").file("/srv/app/main.py", 0o644)
	f := Facts{Command: []string{"python3", "/srv/app/main.py"}, ReadOnly: []string{"/srv/app"}, FS: fsys}
	startStopsAtOnce(t, f, []string{"FileNotFoundError: [Errno 2] No such file or directory: '/srv/app/conf.json'"},
		"could not open /srv/app/conf.json: it is a symbolic link to /data/real/conf.json, which is not granted", "ReadOnly /data/real")
}

// A granted path that the fresh unprivileged user cannot reach: the
// directory keeping it out, its mode and both fixes. Not when mcpsandbox
// is not root or a user is given: then the host's permissions are the
// user's own.
func TestPermissionDeniedOnAGrant(t *testing.T) {
	secret := "/home/ann/proj/secret.txt"
	fsys := newFS().dir("/home/ann", 0o700).file(secret, 0o644)
	f := Facts{Command: []string{"python3", "x.py"}, ReadOnly: []string{"/home/ann/proj"}, Root: true, FS: fsys}
	line := []string{"PermissionError: [Errno 13] Permission denied: '" + secret + "'"}
	d := startStopsAtOnce(t, f, line, "it is granted, but /home/ann (mode 0700) keeps the server's unprivileged user out", "chmod o+x /home/ann", "User NAME")
	if d.Kind != Denied || d.Setting != "User" {
		t.Errorf("%+v", d)
	}
	fsys.dir("/home/ann", 0o755).file(secret, 0o600)
	startStopsAtOnce(t, f, line, "/home/ann/proj/secret.txt (mode 0600)", "chmod o+r "+secret)
	for _, g := range []Facts{{ReadOnly: f.ReadOnly, Root: false, FS: fsys}, {ReadOnly: f.ReadOnly, Root: true, User: "ann", FS: fsys}} {
		if d, ok := StartFailure(line, g); ok {
			t.Errorf("root %v user %q: diagnosed %q", g.Root, g.User, render(d))
		}
	}
}

// A server that exits saying it needs a variable: which one, and where it
// was lost. A variable the policy sets was refused for its value, which is
// none of mcpsandbox's business.
func TestVariableNotPassed(t *testing.T) {
	host := func(name string) bool { return name == "GITLAB_TOKEN" }
	line := func(v string) []string { return []string{"Error: " + v + " environment variable is not set"} }
	f := Facts{HostEnv: host, FS: newFS()}
	startStopsAtOnce(t, f, line("GITLAB_TOKEN"), "needs the environment variable GITLAB_TOKEN", "does not pass on", "Env GITLAB_TOKEN")
	startStopsAtOnce(t, f, []string{"Error: MCPSANDBOX_UNSET_KEY is required"},
		"needs the environment variable MCPSANDBOX_UNSET_KEY, which is not set", "Env MCPSANDBOX_UNSET_KEY")
	f.Env = []string{"API_KEY"}
	startStopsAtOnce(t, f, line("API_KEY"), "the policy passes on but mcpsandbox's own environment lacks")
	f.Env = []string{"API_KEY=abc"}
	if d, ok := StartFailure(line("API_KEY"), f); ok {
		t.Errorf("a variable the policy sets: diagnosed %q", render(d))
	}
}

// npx without the network: the message offers prepare and the network;
// with the host's network there is nothing to say.
func TestOfflineDownload(t *testing.T) {
	line := []string{"npm error request to https://registry.npmjs.org/cowsay failed: cache mode is 'only-if-cached' but no cached response is available."}
	f := Facts{Command: []string{"npx", "-y", "cowsay"}, Net: "none", NetHost: "host", FS: newFS()}
	d := startStopsAtOnce(t, f, line, "https://registry.npmjs.org/cowsay failed", "(Net none)", "`mcpsandbox prepare -- npx -y cowsay`", "Net host")
	if d.Setting != "Net" {
		t.Errorf("%+v", d)
	}
	f.Net, f.NetEgress = "egress", "egress"
	startStopsAtOnce(t, f, line, "https://registry.npmjs.org/cowsay failed", "only the hosts the policy names (AllowHosts)", "`mcpsandbox prepare -- npx -y cowsay`", "name the host it needs with AllowHosts HOST")
	f.Net = "host"
	if d, ok := StartFailure(line, f); ok {
		t.Errorf("with the host's network: diagnosed %q", render(d))
	}
}

// A file the server could not find that is not on the host either and is
// not the script it runs (a configuration file it will be given, say):
// nothing of the confinement caused it, so nothing is said and the relay
// restarts as usual. Nor for a path inside /usr, which the sandbox shows.
func TestMissingFileThatIsNotTheScript(t *testing.T) {
	f := Facts{Command: []string{"python3", "/srv/app/main.py"}, ReadOnly: []string{"/srv/app"}, FS: newFS().file("/srv/app/main.py", 0o644).file("/usr/lib/x", 0o644)}
	for _, line := range []string{
		"FileNotFoundError: [Errno 2] No such file or directory: '/srv/app/config.json'",
		"FileNotFoundError: [Errno 2] No such file or directory: '/usr/lib/x'",
		"ModuleNotFoundError: No module named 'mcp'",
	} {
		if d, ok := StartFailure([]string{line}, f); ok {
			t.Errorf("%q: diagnosed %q", line, render(d))
		}
	}
}

// The last error wins: a server that printed a harmless warning first and
// then died of a missing grant is diagnosed by the last.
func TestLastErrorFirst(t *testing.T) {
	fsys := newFS().file("/opt/a/f", 0o644).file("/opt/b/g", 0o644)
	d, ok := StartFailure([]string{
		"Error: ENOENT: no such file or directory, open '/opt/a/f'",
		"Error: ENOENT: no such file or directory, open '/opt/b/g'",
		"Node.js v20.20.2",
	}, Facts{FS: fsys})
	if !ok || d.Path != "/opt/b/g" {
		t.Errorf("diagnosed %v, want the last error's path", d)
	}
}

// Each pattern recognises the line its runtime printed confined here, and
// takes the path (or URL) from it.
func TestStderrPatternsMatchTheirSamples(t *testing.T) {
	for i := range stderrPatterns {
		p := &stderrPatterns[i]
		found := findCauses([]string{"unrelated line", p.sample, "Node.js v20.20.2"})
		if len(found) == 0 || found[0].pattern != p {
			t.Errorf("%s: sample %q not recognised as its own (%v)", p.name, p.sample, found)
			continue
		}
		if path := found[0].path; path == "" || (path[0] != '/' && p.kind != causeOffline && p.kind != causeEnv) {
			t.Errorf("%s: took %q from %q", p.name, path, p.sample)
		}
	}
	// npx with the network gone, not only with --offline (a real line too).
	if found := findCauses([]string{"npm error request to https://registry.npmjs.org/cowsay failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org"}); len(found) != 1 || found[0].pattern.kind != causeOffline || found[0].path != "https://registry.npmjs.org/cowsay" {
		t.Errorf("npm's failed download: %v", found)
	}
	if found := findCauses([]string{"ModuleNotFoundError: No module named 'mcp'"}); len(found) != 0 {
		t.Errorf("a message naming no path was taken for one: %v", found)
	}
}

// The line quoted for a crash loop is the last one naming an error, not
// node's version banner after it.
func TestErrorLine(t *testing.T) {
	if got := ErrorLine(nodeTrace("/srv/x.js")); got != "Error: Cannot find module '/srv/x.js'" {
		t.Errorf("ErrorLine = %q", got)
	}
	if got := ErrorLine([]string{"starting", "  bye  "}); got != "bye" {
		t.Errorf("ErrorLine without an error word = %q, want the last line", got)
	}
	if got := ErrorLine(nil); got != "" {
		t.Errorf("ErrorLine(nil) = %q", got)
	}
}

// A start failure may be checked against the host (the server is stopped
// for good, the answer never reaches it), but what it recommends granting
// is never a place no policy should grant: mcpsandbox's own state (other
// servers' code), the user's, a system directory.
func TestStartFailureNamesNoGrantOfOurOwn(t *testing.T) {
	fsys := newFS().file("/var/lib/mcpsandbox/other/npm/x.js", 0o644).file("/home/ann/.local/state/mcpsandbox/b/k", 0o600).file("/etc/ssl/private/k", 0o600)
	f := Facts{Command: []string{"node", "/srv/a.js"}, Own: []string{"/home/ann/.local/state/mcpsandbox"}, FS: fsys}
	for _, p := range []string{"/var/lib/mcpsandbox/other/npm/x.js", "/home/ann/.local/state/mcpsandbox/b/k", "/etc/ssl/private/k"} {
		if d, ok := StartFailure([]string{"Error: EACCES: permission denied, open '" + p + "'"}, f); ok {
			t.Errorf("%s: diagnosed %q", p, render(d))
		}
	}
}
