package layering

// mcpSDK is every package of the MCP Go SDK.
const mcpSDK = "github.com/modelcontextprotocol/go-sdk/..."

// The house rules. Every package that pkgs names must not depend on any
// package that notOn names: not import it, and not import anything that
// leads to it. Only the non-test build counts: tests may reach for the SDK,
// policy, the demo and the test helpers.
//
// Names are patterns as in `go list`: "x/..." is x and every package below
// it. A name whose first element has no dot is in this module ("sandbox/..."
// is github.com/mcpsandbox/mcpsandbox/sandbox/...), and "./..." is the whole
// module.
var rules = []rule{
	{
		pkgs:  []string{"sandbox/..."},
		notOn: []string{"policy", "supervisor/...", "healthcheck", "demo", mcpSDK},
		why:   "the sandbox confines a process: it knows nothing of policy files, supervision or MCP, and is told what to do in its own terms",
	},
	{
		pkgs:  []string{"sandbox/internal/initstage"},
		notOn: []string{"sandbox", "sandbox/scope"},
		why:   "the init stage is the bottom of the sandbox: package sandbox assembles the confinement around it, never the other way (only sandbox may import it, by Go's internal rule)",
	},
	{
		pkgs:  []string{"supervisor"},
		notOn: []string{mcpSDK},
		why:   "the supervisor relays MCP as JSON-RPC lines it frames itself; the SDK is for the demo and the tests",
	},
	{
		pkgs:  []string{"policy"},
		notOn: []string{"./..."},
		why:   "policy is a leaf that every layer reads",
	},
	{
		pkgs:  []string{"./..."},
		notOn: []string{"cmd/..."},
		why:   "the commands are the top: nothing imports them",
	},
	{
		// daemon/ does not exist yet; the rule waits for it.
		pkgs:  []string{"healthcheck", "sandbox/...", "policy"},
		notOn: []string{"supervisor/...", "daemon/..."},
		why:   "imports point down cmd → daemon → supervisor → {healthcheck, sandbox, policy}, never back up",
	},
	{
		pkgs:  []string{"supervisor/..."},
		notOn: []string{"daemon/..."},
		why:   "imports point down cmd → daemon → supervisor, never back up",
	},
}
