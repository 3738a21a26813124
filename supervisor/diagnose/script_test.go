package diagnose

import (
	"strings"
	"testing"
)

// `run -- node x.js` where x.js is missing on the host too: node says it
// cannot find the module, and no restart can make the file appear, so the
// start failure is permanent (the relay stops at once, not after a crash
// loop), and the message names the missing path, the command and the
// working directory the relative path was taken from.
func TestNodeScriptMissingOnTheHostToo(t *testing.T) {
	f := Facts{Command: []string{"/usr/bin/node", "x.js"}, WorkDir: "/home/ann/proj", ReadOnly: []string{"/home/ann/proj"},
		FS: newFS().dir("/home/ann/proj", 0o755)}
	d := startStopsAtOnce(t, f, nodeTrace("/home/ann/proj/x.js"),
		"/home/ann/proj/x.js does not exist, on the host either", "in the command (Command)", "x.js is taken from the working directory /home/ann/proj (WorkDir)")
	if d.Kind != ScriptMissing || d.Path != "/home/ann/proj/x.js" || d.Setting != "Command" {
		t.Errorf("%+v", d)
	}
	if msg := d.Render(flag, flag); !strings.Contains(msg, "correct its path in the command (after --); x.js is taken from the working directory /home/ann/proj (--workdir)") {
		t.Errorf("rendered for run: %q", msg)
	}
	// node resolves x to x.js, but names it as given.
	f.Command = []string{"node", "./x"}
	startStopsAtOnce(t, f, nodeTrace("/home/ann/proj/x"), "/home/ann/proj/x does not exist")
	// An absolute path needs no working directory.
	f.Command, f.WorkDir = []string{"node", "/srv/gone/index.js"}, ""
	d = startStopsAtOnce(t, f, nodeTrace("/srv/gone/index.js"), "/srv/gone/index.js does not exist, on the host either")
	if msg := render(d); strings.Contains(msg, "working directory") {
		t.Errorf("an absolute script: %q", msg)
	}
}

// python says it cannot open its script: that is always the script.
func TestPythonScriptMissingOnTheHostToo(t *testing.T) {
	f := Facts{Command: []string{"python3", "x.py"}, WorkDir: "/home/ann/proj", FS: newFS().dir("/home/ann/proj", 0o755)}
	startStopsAtOnce(t, f, []string{"/usr/bin/python3: can't open file '/home/ann/proj/x.py': [Errno 2] No such file or directory"},
		"the server's script /home/ann/proj/x.py does not exist, on the host either", "x.py is taken from the working directory /home/ann/proj")
	f.Command = []string{"uv", "run", "--", "python", "server.py"} // the script as python saw it, not as given
	startStopsAtOnce(t, f, []string{"python: can't open file '/home/ann/proj/srv/server.py': [Errno 2] No such file or directory"},
		"the server's script /home/ann/proj/srv/server.py does not exist")
}

// A module the script requires that is missing is the code's own bug, not
// its command line's; a tool error naming a missing script is no start.
// Neither is diagnosed (the relay restarts as before).
func TestMissingFileThatIsNotTheCommandsScript(t *testing.T) {
	f := Facts{Command: []string{"node", "x.js"}, WorkDir: "/home/ann/proj", ReadOnly: []string{"/home/ann/proj"},
		FS: newFS().file("/home/ann/proj/x.js", 0o644)}
	lines := []string{"Error: Cannot find module '/home/ann/proj/lib/dep.js'", "Require stack:", "- /home/ann/proj/x.js"}
	if d, ok := StartFailure(lines, f); ok {
		t.Errorf("a missing dependency: diagnosed %q", render(d))
	}
	result := []byte(`{"isError":true,"content":[{"type":"text","text":"python3: can't open file '/home/ann/proj/y.py': [Errno 2] No such file or directory"}]}`)
	if d, ok := ToolError(result, f); ok {
		t.Errorf("a tool error: diagnosed %q", render(d))
	}
}
