package launch

import "testing"

// The name is read from the launch line as Choose reads it, by the one
// parser: a flag's value is never taken for the package or script.
func TestNameIsWhatPeopleCallTheServer(t *testing.T) {
	h := testHost(t, t.TempDir())
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/you/notes"}, "server-filesystem"},
		{[]string{"/usr/bin/npx", "-y", "@modelcontextprotocol/server-memory@2025.8.4"}, "server-memory"},
		{[]string{"npx", "--package", "@scope/tools@1", "--", "tools-cli"}, "tools"},
		{[]string{"npx", "-y", "github:someone/mcp-thing"}, "mcp-thing"},
		{[]string{"uvx", "mcp-server-git", "--repository", "."}, "mcp-server-git"},
		{[]string{"uvx", "mcp-server-time==1.0"}, "mcp-server-time"},
		{[]string{"uvx", "--python", "3.12", "mcp-server-fetch"}, "mcp-server-fetch"},
		{[]string{"node", "/srv/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"}, "server-everything"},
		{[]string{"node", "--require", "./preload.js", "/opt/weather/build/index.js"}, "weather"},
		{[]string{"node", "dist/index.js"}, "index"},
		{[]string{"nodejs", "server.js"}, "server"},
		{[]string{"python3", "weather.py"}, "weather"},
		{[]string{"python3", "-m", "mcp_server_time"}, "mcp_server_time"},
		{[]string{"python3.12", "-Im", "mcp_server_git", "--repository", "."}, "mcp_server_git"},
		{[]string{"python3", "-W", "ignore", "/opt/tools/github/server.py"}, "github"},
		{[]string{"python3", "-c", "print(1)"}, "python3"},
		{[]string{"npx", "-c", "some-server --flag"}, "npx"},
		{[]string{"/opt/bin/my-server", "--flag"}, "my-server"},
		{nil, "server"},
	} {
		if got := Read(c.cmd, nil, h).Name; got != c.want {
			t.Errorf("Read(%q).Name = %q, want %q", c.cmd, got, c.want)
		}
	}
}
