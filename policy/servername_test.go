package policy

import "testing"

func TestServerNameIsWhatPeopleCallTheServer(t *testing.T) {
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/you/notes"}, "server-filesystem"},
		{[]string{"/usr/bin/npx", "-y", "@modelcontextprotocol/server-memory@2025.8.4"}, "server-memory"},
		{[]string{"uvx", "mcp-server-git", "--repository", "."}, "mcp-server-git"},
		{[]string{"node", "/srv/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"}, "server-everything"},
		{[]string{"node", "dist/index.js"}, "index"},
		{[]string{"python3", "weather.py"}, "weather"},
		{[]string{"python3", "-m", "mcp_server_time"}, "mcp_server_time"},
		{[]string{"python3", "/opt/tools/github/server.py"}, "github"},
		{[]string{"/opt/bin/my-server", "--flag"}, "my-server"},
		{nil, "server"},
	} {
		if got := ServerName(c.cmd); got != c.want {
			t.Errorf("ServerName(%q) = %q, want %q", c.cmd, got, c.want)
		}
	}
}
