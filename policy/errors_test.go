package policy

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// Each broken policy file gives an error at file:line:col that says what is
// wrong and how to fix it.
func TestBrokenFilesSayWhereAndWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string // p.yaml is loaded
		at    string            // file:line:col, file relative to the directory
		want  []string
	}{
		{"misspelt section", map[string]string{"p.yaml": "limit:\n  memory: 1GiB\n"},
			"p.yaml:1:1", []string{`unknown key "limit"`, "did you mean limits?"}},
		{"misspelt key", map[string]string{"p.yaml": "limits:\n  memroy: 1GiB\n"},
			"p.yaml:2:3", []string{`unknown key "memroy" in limits`, "did you mean memory?"}},
		{"key in the wrong section", map[string]string{"p.yaml": "network:\n  memory: 1GiB\n"},
			"p.yaml:2:3", []string{`unknown key "memory" in network`, "did you mean limits.memory?"}},
		{"key at the top", map[string]string{"p.yaml": "pids: 5\n"},
			"p.yaml:1:1", []string{`unknown key "pids"`, "did you mean limits.pids?"}},
		{"unknown key with no near one", map[string]string{"p.yaml": "seccomp:\n  zzzzzz: 1\n"},
			"p.yaml:2:3", []string{"the keys of seccomp are profile, log"}},
		{"section not a mapping", map[string]string{"p.yaml": "limits: 5\n"},
			"p.yaml:1:9", []string{"limits must be a mapping of its keys", "e.g. limits: {memory: ...}"}},
		{"document not a mapping", map[string]string{"p.yaml": "- limits\n"},
			"p.yaml:1:1", []string{"a policy file is a mapping of sections"}},
		{"list given a string", map[string]string{"p.yaml": "filesystem:\n  ro: /srv\n"},
			"p.yaml:2:7", []string{"filesystem.ro: must be a list", "[/srv/data]"}},
		{"list item not a string", map[string]string{"p.yaml": "env:\n  pass: [A, 5]\n"},
			"p.yaml:2:13", []string{"env.pass: items must be strings", "quote it"}},
		{"scalar given a list", map[string]string{"p.yaml": "limits:\n  memory: [1GiB]\n"},
			"p.yaml:2:11", []string{"limits.memory: must be a size, e.g. 64MiB"}},
		{"no value", map[string]string{"p.yaml": "limits:\n  pids:\n"},
			"p.yaml:2:3", []string{"limits.pids: has no value", "a whole number", "or delete the key"}},
		{"bad size", map[string]string{"p.yaml": "limits:\n  memory: lots\n"},
			"p.yaml:2:11", []string{"limits.memory", `"lots"`, "KiB, MiB and GiB"}},
		{"duration without unit", map[string]string{"p.yaml": "health:\n  ping-interval: 5\n"},
			"p.yaml:2:18", []string{`health.ping-interval "5": must be a duration such as 500ms, 15s or 2m`}},
		{"yes is no boolean", map[string]string{"p.yaml": "filesystem:\n  noexec-tmp: yes\n"},
			"p.yaml:2:15", []string{`filesystem.noexec-tmp "yes": must be true or false`}},
		{"fraction for a count", map[string]string{"p.yaml": "limits:\n  pids: 1.5\n"},
			"p.yaml:2:9", []string{`limits.pids "1.5": must be a whole number`}},
		{"word for a number", map[string]string{"p.yaml": "limits:\n  cpu: half\n"},
			"p.yaml:2:8", []string{`limits.cpu "half": must be a number, e.g. 0.5`}},
		{"number for a string", map[string]string{"p.yaml": "user:\n  name: 1000\n"},
			"p.yaml:2:9", []string{`user.name "1000": must be a string`, `quote it: "1000"`}},
		{"bad glob", map[string]string{"p.yaml": "mcp:\n  deny-tools: [\"write_[\"]\n"},
			"p.yaml:2:15", []string{`mcp.deny-tools "write_[": is no glob`, "[a-z]"}},
		{"variable in a glob", map[string]string{"p.yaml": "mcp:\n  allow-tools: [\"${HOME}\"]\n"},
			"p.yaml:2:17", []string{"mcp.allow-tools", "variables are expanded only in paths and environment values"}},
		{"bad backoff", map[string]string{"p.yaml": "restart:\n  backoff: 1s\n"},
			"p.yaml:2:12", []string{"restart.backoff", "MIN..MAX"}},
		{"duplicate key", map[string]string{"p.yaml": "limits:\n  pids: 5\n  pids: 6\n"},
			"p.yaml:3:3", []string{`"pids" already defined`}},
		{"YAML syntax", map[string]string{"p.yaml": "filesystem:\n  ro: [/a, /b\n"},
			"p.yaml:2:7", []string{"YAML", "']'"}},
		{"two documents", map[string]string{"p.yaml": "limits: {pids: 5}\n---\nlimits: {pids: 6}\n"},
			"p.yaml:3:1", []string{"a second YAML document", "remove what follows ---"}},
		{"alias", map[string]string{"p.yaml": "limits:\n  pids: &n 5\n  nofile: *n\n"},
			"p.yaml:3:11", []string{"limits.nofile: aliases", "write the value"}},
		{"unknown variable", map[string]string{"p.yaml": "filesystem:\n  ro: [\"${HOM}/x\"]\n"},
			"p.yaml:2:8", []string{"unknown variable ${HOM}", "did you mean ${HOME}?"}},
		{"state used while off", map[string]string{"p.yaml": "filesystem:\n  rw: [\"${STATE}/x\"]\n"},
			"p.yaml:2:8", []string{"${STATE} is the server's state directory, which is off", "turn it on with state.dir"}},
		{"state variable without the directory", map[string]string{"p.yaml": "state:\n  env: MCP_STATE\n"},
			"p.yaml:2:3", []string{"state.env MCP_STATE: names the state directory's variable, but the state directory is off", "turn it on with state.dir"}},
		{"workdir relative", map[string]string{"p.yaml": "filesystem:\n  workdir: src\n"},
			"p.yaml:2:3", []string{`filesystem.workdir "src": must be an absolute path`, "${PWD}"}},
		{"args mode", map[string]string{"p.yaml": "filesystem:\n  args: write\n"},
			"p.yaml:2:3", []string{`filesystem.args "write": is no grant mode`, "use none, ro or rw"}},
		{"env set a list", map[string]string{"p.yaml": "env:\n  set: [A=1]\n"},
			"p.yaml:2:8", []string{"env.set must be a mapping of variable names to values", "{set: {LOG_LEVEL: debug}}"}},
		{"env set no value", map[string]string{"p.yaml": "env:\n  set:\n    A:\n"},
			"p.yaml:3:5", []string{"env.set: A must have a value", "env.pass"}},
		{"argument past the last", map[string]string{"p.yaml": "filesystem:\n  rw: [\"${ARG3}\"]\n"},
			"p.yaml:2:8", []string{"${ARG3}: the server has 2 arguments"}},
		{"ARGS inside a string", map[string]string{"p.yaml": "filesystem:\n  rw: [\"/x/${ARGS}\"]\n"},
			"p.yaml:2:8", []string{"${ARGS} stands for every argument", "list item of its own"}},
		{"unclosed variable", map[string]string{"p.yaml": "log:\n  file: ${HOME/x\n"},
			"p.yaml:2:9", []string{"unclosed ${", "$$ for a literal $"}},
		{"variable where none expands", map[string]string{"p.yaml": "user:\n  name: ${USER}\n"},
			"p.yaml:2:9", []string{"user.name", "variables are expanded only in paths and environment values"}},
		{"extends a missing file", map[string]string{"p.yaml": "extends: ./nope.yaml\n"},
			"p.yaml:1:10", []string{`extends "./nope.yaml"`, "no such file"}},
		{"extends an unknown built-in", map[string]string{"p.yaml": "extends: defualt\n"},
			"p.yaml:1:10", []string{`no built-in policy "defualt"`, "built-ins: default, small", "./defualt"}},
		{"extends not a name", map[string]string{"p.yaml": "extends: [a, b]\n"},
			"p.yaml:1:10", []string{"extends must name a built-in policy or a file", "extends: ./base.yaml"}},
		{"extends cycle", map[string]string{"p.yaml": "extends: a.yaml\n", "a.yaml": "extends: sub/b.yaml\n", "sub/b.yaml": "extends: ../a.yaml\n"},
			"sub/b.yaml:1:10", []string{"extends cycle: ", "a.yaml → ", "sub/b.yaml → ", "remove one of these extends"}},
		{"error in the extended file", map[string]string{"p.yaml": "extends: base.yaml\n", "base.yaml": "\nlimits:\n  memory: much\n"},
			"base.yaml:3:11", []string{"limits.memory"}},

		// Operator overrides (pins.overrides): placed at what is wrong.
		{"override: lowers risk", map[string]string{"p.yaml": "pins:\n  overrides:\n    write_file: {annotations: {readOnlyHint: true}}\n"},
			"p.yaml:3:32", []string{"pins.overrides.write_file.annotations", "readOnlyHint: true would lower the risk the host sees", "use readOnlyHint: false"}},
		{"override: calls a tool safe", map[string]string{"p.yaml": "pins:\n  overrides:\n    rm: {annotations: {destructiveHint: false}}\n"},
			"p.yaml:3:24", []string{"destructiveHint: false would lower the risk", "use destructiveHint: true"}},
		{"override: unknown hint", map[string]string{"p.yaml": "pins:\n  overrides:\n    rm: {annotations: {dangerous: true}}\n"},
			"p.yaml:3:24", []string{`"dangerous" is no annotation an override may set`, "readOnlyHint, destructiveHint, idempotentHint, openWorldHint"}},
		{"override: hint not a boolean", map[string]string{"p.yaml": "pins:\n  overrides:\n    rm: {annotations: {destructiveHint: yes}}\n"},
			"p.yaml:3:41", []string{"pins.overrides.rm.annotations.destructiveHint must be true or false"}},
		{"override: unknown key", map[string]string{"p.yaml": "pins:\n  overrides:\n    rm: {title: Remove}\n"},
			"p.yaml:3:10", []string{`unknown key "title" in pins.overrides.rm`, "an override sets description and annotations"}},
		{"override: sets nothing", map[string]string{"p.yaml": "pins:\n  overrides:\n    rm: {annotations: {}}\n"},
			"p.yaml:3:5", []string{`tool "rm": the override sets nothing`}},
		{"override: empty description", map[string]string{"p.yaml": "pins:\n  overrides:\n    rm: {description: \"\"}\n"},
			"p.yaml:3:23", []string{"pins.overrides.rm.description must be the text the host sees, a non-empty string"}},
		{"override: not a mapping", map[string]string{"p.yaml": "pins:\n  overrides: [rm]\n"},
			"p.yaml:2:14", []string{"pins.overrides must be a mapping of tool names to overrides", "annotations: {destructiveHint: true}"}},
		{"override: a tool without a mapping", map[string]string{"p.yaml": "pins:\n  overrides:\n    rm: Removes.\n"},
			"p.yaml:3:5", []string{"pins.overrides.rm must be a mapping of description and annotations"}},

		// Values of the right type that make no sense: Validate's errors,
		// placed at the key that set them.
		{"restart mode", map[string]string{"p.yaml": "restart:\n  mode: sometimes\n"},
			"p.yaml:2:3", []string{`restart.mode "sometimes": is no restart mode: use always, on-failure or never`}},
		{"message size", map[string]string{"p.yaml": "limits:\n  max-message: 10\n"},
			"p.yaml:2:3", []string{"limits.max-message 10: is too small: use at least 1KiB"}},
		{"network mode", map[string]string{"p.yaml": "network:\n  mode: bridge\n"},
			"p.yaml:2:3", []string{`network.mode "bridge": is no network mode: use none, host or egress`}},
		{"bad host", map[string]string{"p.yaml": "network:\n  allow-hosts: [api.example.test, \"exa mple.test\"]\n"},
			"p.yaml:2:35", []string{`network.allow-hosts "exa mple.test": is no host: "exa mple.test" is no host name`, HostSpecForms}},
		{"bad port of a denied host", map[string]string{"p.yaml": "network:\n  allow-hosts: [\"*\"]\n  deny-hosts:\n    - evil.example.test:http\n"},
			"p.yaml:4:7", []string{`network.deny-hosts "evil.example.test:http": is no host: port "http" is not a number`, HostSpecForms}},
		{"variable in a host", map[string]string{"p.yaml": "network:\n  allow-hosts: [\"${HOME}\"]\n"},
			"p.yaml:2:17", []string{"network.allow-hosts", "${HOME} in a host: only ${ARG1}, ${ARG2}... are expanded"}},
		{"host mode beside allowed hosts", map[string]string{"p.yaml": "network:\n  mode: host\n  allow-hosts: [api.example.test]\n"},
			"p.yaml:2:9", []string{"network.mode host: contradicts network.allow-hosts, which selects network mode egress", "drop network.mode to reach only those hosts, or drop network.allow-hosts for the host's whole network"}},
		{"none beside allowed hosts", map[string]string{"p.yaml": "network:\n  allow-hosts: [api.example.test]\n  mode: none\n"},
			"p.yaml:3:9", []string{"network.mode none: contradicts network.allow-hosts", "or drop network.allow-hosts for no network"}},
		{"egress with no host", map[string]string{"p.yaml": "network:\n  mode: egress\n"},
			"p.yaml:2:3", []string{"network.mode egress: with no network.allow-hosts reaches nothing", "or use network.mode none"}},
		{"denied hosts under host networking", map[string]string{"p.yaml": "network:\n  mode: host\n  deny-hosts: [evil.example.test]\n"},
			"p.yaml:3:15", []string{`network.deny-hosts "evil.example.test": is not in force under network.mode host`, "list the hosts to allow with network.allow-hosts instead"}},
		{"denied hosts and none allowed", map[string]string{"p.yaml": "network:\n  deny-hosts: [evil.example.test]\n"},
			"p.yaml:2:15", []string{"network.deny-hosts", "only narrows what network.allow-hosts allows, and nothing is allowed: under network mode none no host is reachable anyway", "* for any public host"}},
		{"resolver", map[string]string{"p.yaml": "network:\n  allow-hosts: [api.example.test]\n  resolver: \"192.0.2.53:dns\"\n"},
			"p.yaml:3:3", []string{`network.resolver "192.0.2.53:dns": port "dns" is not a number`, "port 53 if none"}},
		{"log level", map[string]string{"p.yaml": "log:\n  level: loud\n"},
			"p.yaml:2:3", []string{`log.level "loud"`, "debug, info, warn or error"}},
		{"nofile", map[string]string{"p.yaml": "limits:\n  nofile: 3\n"},
			"p.yaml:2:3", []string{"limits.nofile 3: is too small for any server: use at least 16"}},
		{"env pass with a value", map[string]string{"p.yaml": "env:\n  pass: [\"A=x\"]\n"},
			"p.yaml:2:10", []string{`env.pass "A=x": is no variable name`, "env.set: {NAME: VALUE}"}},
		{"env set bad name", map[string]string{"p.yaml": "env:\n  set: {\"A-B\": x}\n"},
			"p.yaml:2:9", []string{`env.set "A-B": is no variable name`}},
		{"fields named as keys", map[string]string{"p.yaml": "health:\n  ping-interval: 1s\n  ping-timeout: 0s\n"},
			"p.yaml:3:3", []string{"health.ping-timeout: must be positive while pings are on (health.ping-interval 1s)"}},
		{"in the extended file", map[string]string{"p.yaml": "extends: base.yaml\nlimits: {pids: 5}\n", "base.yaml": "limits:\n  cpu: -1\n"},
			"base.yaml:2:3", []string{"limits.cpu -1: must not be negative"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, tc.files)
			p, origin, err := load(t, dir, "p.yaml")
			if err == nil {
				p.Command = []string{"server"}
				err = origin.Validate(&p)
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v (%T), want a *FileError", err, err)
			}
			msg := err.Error()
			if at := filepath.Join(dir, tc.at) + ": "; !strings.HasPrefix(msg, at) {
				t.Errorf("error %q\ndoes not start with %q", msg, at)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q\nlacks %q", msg, w)
				}
			}
		})
	}
}

// A Validate error about a field no file set stays as it is, for the
// caller to name (the command line: as its flag).
func TestValidateLeavesFieldsNoFileSet(t *testing.T) {
	p := Default()
	p.Pids = -1
	p.Command = []string{"server"}
	err := Origin{"Memory": {File: "p.yaml", Line: 1, Col: 1}}.Validate(&p)
	var fe *FileError
	if err == nil || errors.As(err, &fe) {
		t.Fatalf("got %v, want the plain field error", err)
	}
}
