package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/daemon/config"
	"github.com/mcpsandbox/mcpsandbox/hostconfig"
	"github.com/tailscale/hujson"
)

// withoutLaunch is data, the file path's contents, with each server's
// command and args values blanked: what wrap must leave byte for byte.
func withoutLaunch(t *testing.T, path string, data []byte) string {
	t.Helper()
	root, err := hujson.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	memberOf := func(v *hujson.Value, name string) *hujson.Value {
		if obj, ok := v.Value.(*hujson.Object); ok {
			for i := range obj.Members {
				if obj.Members[i].Name.Value.(hujson.Literal).String() == name {
					return &obj.Members[i].Value
				}
			}
		}
		return nil
	}
	for _, section := range hostconfig.SectionsOf(path) {
		sec := &root
		for name := range strings.SplitSeq(section, ".") {
			if sec = memberOf(sec, name); sec == nil {
				break
			}
		}
		if sec == nil {
			continue
		}
		for _, m := range sec.Value.(*hujson.Object).Members {
			if v := memberOf(&m.Value, "command"); v != nil {
				v.Value = hujson.String("")
			}
			if v := memberOf(&m.Value, "args"); v != nil {
				v.Value = &hujson.Array{}
			}
		}
	}
	return string(root.Pack())
}

// In a VS Code settings.json, wrap rewrites the command and args of the
// stdio servers under "mcp" and no other byte: not the editor's settings,
// comments, trailing commas or indentation, nor a top-level "servers"
// setting. --dry-run shows that as a diff first and writes nothing.
func TestWrapSettingsChangesOnlyTheLaunchLines(t *testing.T) {
	path, orig := hostSample(t, "settings.json")
	out, _, code := runCLI(t, "wrap", "--dry-run", "--command", wrapTestCommand, path)
	if code != exitOK {
		t.Fatalf("--dry-run: exit %d\n%s", code, out)
	}
	wantIn(t, "wrap --dry-run", out,
		"--- "+path+"\n+++ "+path+"\n",
		`-                "command": "uvx",`+"\n"+
			`-                "args": ["mcp-server-sqlite", "--db-path", "/home/ann/data/app.db"],`+"\n"+
			`+                "command": "/usr/local/bin/mcpsandbox",`+"\n"+
			`+                "args": ["run", "--env", "LOG_LEVEL", "--", "uvx", "mcp-server-sqlite", "--db-path", "/home/ann/data/app.db"],`+"\n",
		`+                    "run",`+"\n"+`+                    "--",`+"\n"+`+                    "npx",`+"\n"+`                     "-y",`+"\n",
	)
	if strings.Contains(out, `"make"`) || strings.Contains(out, "editor.") {
		t.Errorf("the diff shows lines of other settings:\n%s", out)
	}
	if dir, _ := os.ReadDir(filepath.Dir(path)); !bytes.Equal(readFile(t, path), orig) || len(dir) != 1 {
		t.Errorf("--dry-run wrote: %v", dir)
	}

	if out, errOut, code := runCLI(t, "wrap", "--no-prepare", "--command", wrapTestCommand, path); code != exitOK {
		t.Fatalf("wrap: exit %d\n%s%s", code, out, errOut)
	}
	wrapped := readFile(t, path)
	if bytes.Equal(wrapped, orig) {
		t.Fatal("wrap changed nothing")
	}
	if got, want := withoutLaunch(t, path, wrapped), withoutLaunch(t, path, orig); got != want {
		t.Errorf("bytes besides command and args changed:\n%s\nwant\n%s", got, want)
	}
}

// wrap --daemon adds a settings.json's servers to the daemon's file in the
// daemon's own form, indented as that file is; one whose env the daemon
// could not expand (${input:...}, which only VS Code asks for) stays as it
// was, with the reason; --undo takes out what wrap added and gives the
// settings back byte for byte.
func TestWrapDaemonFromSettings(t *testing.T) {
	path, orig := hostSample(t, "settings.json")
	daemonFile := filepath.Join(t.TempDir(), "mcpsandbox", "servers.json")
	wrap := []string{"wrap", "--daemon", "--daemon-config", daemonFile, "--no-prepare", "--command", wrapTestCommand, path}
	out, errOut, code := runCLI(t, wrap...)
	if code != exitFailure {
		t.Errorf("exit %d, want %d for github, whose env asks VS Code for an input\n%s%s", code, exitFailure, out, errOut)
	}
	wantIn(t, "wrap --daemon", out, "  github: not wrapped: the daemon could not run it: ", "${input:gh-token}",
		"  notes: wrapped: "+wrapTestCommand+" connect notes\n", "  sqlite: wrapped: "+wrapTestCommand+" connect sqlite\n")
	after := fileEntriesOf(t, path, readFile(t, path))
	if !bytes.Equal(after["github"].Raw, fileEntriesOf(t, path, orig)["github"].Raw) {
		t.Errorf("github changed:\n%s", after["github"].Raw)
	}
	want := `{
  "mcpServers": {
    "notes": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem@2026.8.31",
        "/home/ann/notes", // nothing else
      ],
    },
    "sqlite": {
      "command": "uvx",
      "args": ["mcp-server-sqlite", "--db-path", "/home/ann/data/app.db"],
      "env": {"LOG_LEVEL": "info"}, // quiet
    }
  }
}
`
	if got := string(readFile(t, daemonFile)); got != want {
		t.Errorf("the daemon's file:\n%s\nwant\n%s", got, want)
	}
	cfg, err := config.Load(daemonFile)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range cfg.Servers {
		got = append(got, s.Name+"="+strings.Join(s.Command, " "))
	}
	if want := []string{"notes=npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /home/ann/notes", "sqlite=uvx mcp-server-sqlite --db-path /home/ann/data/app.db"}; !slices.Equal(got, want) {
		t.Errorf("the daemon's servers: %q, want %q", got, want)
	}

	runCLI(t, wrap...)
	if got := string(readFile(t, daemonFile)); got != want {
		t.Errorf("a second wrap --daemon changed the daemon's file:\n%s", got)
	}
	out, errOut, code = runCLI(t, "wrap", "--undo", path)
	if code != exitOK || !bytes.Equal(readFile(t, path), orig) {
		t.Errorf("--undo: exit %d\n%s%s\n%s", code, out, errOut, readFile(t, path))
	}
	if cfg, err := config.Load(daemonFile); err != nil || len(cfg.Servers) != 0 {
		t.Errorf("the daemon's file after --undo: %v\n%s", err, readFile(t, daemonFile))
	}
}

// Without FILE, wrap takes the settings.json of VS Code, VS Code Insiders,
// VSCodium and the workspace when it has MCP servers, naming it; one
// without (most are, some empty) it neither names nor touches, and a home
// with only those has no host configuration.
func TestWrapFindsSettingsWithServers(t *testing.T) {
	home, env := frictionHome(t)
	noServers := map[string]string{
		".config/Code - Insiders/User/settings.json": "",
		".config/VSCodium/User/settings.json":        "{\n    \"editor.fontSize\": 14, // big\n    \"mcp\": {\"servers\": {}},\n}\n",
	}
	writeTree(t, home, noServers)
	workspace := `{"servers": {"x": {"command": "make"}}, "mcp": {"servers": {"s": {"command": "python3", "args": ["s.py"]}}}}`
	writeTree(t, home, map[string]string{
		".config/Code/User/settings.json": `{"editor.fontSize": 14, "mcp": {"servers": {"s": {"command": "node", "args": ["/srv/s.js"]}}}}`,
		".config/VSCodium/User/mcp.json":  `{"servers": {"s": {"command": "node", "args": ["/srv/s.js"]}}}`,
		"project/.vscode/settings.json":   workspace,
		"project/.vscode/extensions.json": `{"recommendations": ["golang.go"]}`,
	})
	out := shell(t, filepath.Join(home, "project"), env, "mcpsandbox wrap --no-prepare")
	wantIn(t, "mcpsandbox wrap", out,
		filepath.Join(home, ".config/Code/User/settings.json")+" (VS Code, user settings):\n",
		filepath.Join(home, ".config/VSCodium/User/mcp.json")+" (VSCodium, user):\n",
		".vscode/settings.json (VS Code, this workspace's settings):\n")
	if strings.Count(out, "  s: wrapped: ") != 3 || strings.Contains(out, "Insiders") || strings.Contains(out, "VSCodium, user settings") || strings.Contains(out, "x:") {
		t.Errorf("wrap took other files or servers, or not each server:\n%s", out)
	}
	if e := fileEntriesOf(t, "settings.json", readFile(t, filepath.Join(home, "project/.vscode/settings.json")))["s"]; len(e.Args) == 0 || e.Args[0] != "run" {
		t.Errorf("the workspace's s: %s", e.Raw)
	}
	if !strings.Contains(string(readFile(t, filepath.Join(home, "project/.vscode/settings.json"))), `{"servers": {"x": {"command": "make"}}, `) {
		t.Errorf("the workspace's servers setting changed:\n%s", readFile(t, filepath.Join(home, "project/.vscode/settings.json")))
	}
	for name, text := range noServers {
		path := filepath.Join(home, name)
		if string(readFile(t, path)) != text {
			t.Errorf("%s without servers was changed:\n%s", name, readFile(t, path))
		}
		for _, suffix := range []string{wrapBackupSuffix, wrapStateSuffix} {
			if _, err := os.Stat(path + suffix); !os.IsNotExist(err) {
				t.Errorf("%s without servers got a %s: %v", name, suffix, err)
			}
		}
	}

	// --undo finds them again, and a settings.json whose servers were
	// taken out by hand since, for its wrap file.
	userSettings := filepath.Join(home, ".config/Code/User/settings.json")
	writeTree(t, home, map[string]string{".config/Code/User/settings.json": `{"editor.fontSize": 14}`})
	out = shell(t, filepath.Join(home, "project"), env, "mcpsandbox wrap --undo")
	wantIn(t, "mcpsandbox wrap --undo", out, userSettings+" (VS Code, user settings):\n  s: no longer in the file: nothing to give back\n",
		".vscode/settings.json (VS Code, this workspace's settings):\n  s: given back\n")
	if _, err := os.Stat(userSettings + wrapStateSuffix); !os.IsNotExist(err) {
		t.Errorf("the wrap file of the user's settings is left: %v", err)
	}
	if got := string(readFile(t, filepath.Join(home, "project/.vscode/settings.json"))); got != workspace {
		t.Errorf("the workspace's settings after --undo:\n%s", got)
	}

	// The same home with settings.json files only, none with servers, from
	// a directory without a workspace.
	if err := os.Remove(filepath.Join(home, ".config/VSCodium/User/mcp.json")); err != nil {
		t.Fatal(err)
	}
	out, code := wrapOutsideAWorkspace(t, env)
	if code != exitFailure || !strings.Contains(out, "no host configuration found; looked for:\n") ||
		!strings.Contains(out, "  "+userSettings+" (VS Code, user settings)\n") ||
		!strings.Contains(out, "  "+filepath.Join(home, ".config/Code - Insiders/User/mcp.json")+" (VS Code Insiders, user)\n") {
		t.Errorf("with settings.json files without servers only: exit %d\n%s", code, out)
	}

	// One that names mcp but does not parse is named, with what is wrong.
	writeTree(t, home, map[string]string{".config/Code/User/settings.json": `{"mcp": {"servers": {"s": {"command": "node"}}}`})
	out, code = wrapOutsideAWorkspace(t, env)
	if code != exitFailure || !strings.Contains(out, userSettings+" (VS Code, user settings):\n") ||
		!strings.Contains(out, "mcpsandbox wrap: "+userSettings+": not JSON (with comments): ") {
		t.Errorf("with a settings.json that does not parse: exit %d\n%s", code, out)
	}
}

// wrapOutsideAWorkspace runs `mcpsandbox wrap` in sh from an empty
// directory and returns its output, both streams, and exit status.
func wrapOutsideAWorkspace(t *testing.T, env []string) (string, int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "mcpsandbox wrap")
	cmd.Dir, cmd.Env = t.TempDir(), env
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}

// Each VS Code profile keeps servers of its own, in User/profiles/ID: wrap
// finds them, named as VS Code names the profile (globalStorage's
// storage.json), or by the id where it names none.
func TestWrapFindsVSCodeProfiles(t *testing.T) {
	home, env := frictionHome(t)
	server := `{"servers": {"s": {"command": "node", "args": ["/srv/s.js"]}}}`
	writeTree(t, home, map[string]string{
		".config/Code/User/globalStorage/storage.json":    `{"userDataProfiles": [{"location": "-5e3f1a", "name": "Work", "icon": "briefcase"}]}`,
		".config/Code/User/profiles/-5e3f1a/mcp.json":     server,
		".config/Code/User/profiles/7b21c0/settings.json": `{"editor.fontSize": 14, "mcp": ` + server + `}`,
		".config/Code/User/profiles/9d04e2/settings.json": `{"editor.fontSize": 12}`,
	})
	out, code := wrapOutsideAWorkspace(t, env)
	profiles := filepath.Join(home, ".config/Code/User/profiles")
	wantIn(t, "mcpsandbox wrap", out,
		filepath.Join(profiles, "-5e3f1a/mcp.json")+" (VS Code, profile Work):\n  s: wrapped: ",
		filepath.Join(profiles, "7b21c0/settings.json")+" (VS Code, profile 7b21c0 settings):\n  s: wrapped: ")
	if code != exitOK || strings.Contains(out, "9d04e2") {
		t.Errorf("exit %d; want 0, and the profile without servers left out:\n%s", code, out)
	}
	if e := fileEntriesOf(t, "mcp.json", readFile(t, filepath.Join(profiles, "-5e3f1a/mcp.json")))["s"]; len(e.Args) == 0 || e.Args[0] != "run" {
		t.Errorf("the Work profile's s: %s", e.Raw)
	}
}
