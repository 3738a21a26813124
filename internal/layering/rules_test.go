package layering

// mcpSDK is every package of the MCP Go SDK.
const mcpSDK = "github.com/modelcontextprotocol/go-sdk/..."

// thirdParty is every package outside the standard library: the hosts the
// module's dependencies come from (go list -m all).
var thirdParty = []string{"github.com/...", "golang.org/...", "gopkg.in/...", "google.golang.org/...", "go.uber.org/...", "cloud.google.com/...", "kernel.org/..."}

// The house rules. Every package that pkgs names must not depend on any
// package that notOn names: not import it, and not import anything that
// leads to it. Only the non-test build counts: tests may reach for the SDK,
// policy, the demo and the test helpers.
//
// Names are patterns as in `go list`: "x/..." is x and every package below
// it. A name whose first element has no dot is in this module ("sandbox/..."
// is github.com/mcpsandbox/mcpsandbox/sandbox/...), "./..." is the whole
// module, and "std:" marks the standard library's ("std:net/http").
var rules = []rule{
	{
		pkgs:  []string{"cmd/mcpsandbox"},
		notOn: []string{mcpSDK, "demo", "provenance/...", "github.com/sigstore/..."},
		why:   "hosts start the mcpsandbox binary for every server, so what it links is loaded and initialised on every start; the SDK is the demo's (cmd/mcpsandbox-demo), and sigstore-go (gRPC, protobuf, govalidator: about 4 ms and 1 MB at init, measured with GODEBUG=inittrace=1) is mcpsandbox-provenance's, which prepare runs. net/http is allowed since npmregistry (prepare asks the registry): its init measured at about 0.2 ms, as crypto/tls's, which miekg/dns links",
	},
	{
		pkgs:  []string{"internal/cmdline"},
		notOn: []string{"./..."},
		but:   []string{"internal/field"},
		why:   "the commands' shared command-line conventions are a leaf (but for internal/field, whose edit distance ranks misspelt flags as it ranks misspelt keys), so sharing them links nothing more into either binary",
	},
	{
		pkgs:  []string{"sandbox/..."},
		notOn: []string{"policy", "supervisor/...", "healthcheck", "demo", mcpSDK},
		why:   "the sandbox confines a process: it knows nothing of policy files, supervision or MCP, and is told what to do in its own terms",
	},
	{
		pkgs:  []string{"sandbox/seccomp"},
		notOn: []string{"sandbox", "sandbox/scope", "supervisor/...", "policy", "healthcheck", "cmd/...", "demo", mcpSDK},
		why:   "the seccomp compiler turns a profile into BPF and is told nothing else: package sandbox loads what it returns, never the other way round",
	},
	{
		pkgs:  []string{"sandbox/cgroups/..."},
		notOn: []string{"sandbox", "supervisor/...", "policy", "healthcheck", "cmd/...", mcpSDK},
		why:   "sandbox/cgroups is the sandbox's host plumbing: the sandbox uses it, never the other way round, and it knows nothing above it",
	},
	{
		pkgs:  []string{"sandbox/internal/initstage"},
		notOn: []string{"sandbox", "sandbox/scope"},
		why:   "the init stage is the bottom of the sandbox: package sandbox assembles the confinement around it, never the other way (only sandbox may import it, by Go's internal rule)",
	},
	{
		pkgs:  []string{"jsonrpc"},
		notOn: []string{"./...", mcpSDK},
		why:   "the JSON-RPC wire code frames, scans and splices lines: it knows nothing of MCP's methods or rules, policy, the sandbox or supervision, which decide what the messages mean",
	},
	{
		pkgs:  []string{"supervisor"},
		notOn: []string{mcpSDK},
		why:   "the supervisor relays MCP as JSON-RPC lines it frames itself; the SDK is for the demo and the tests",
	},
	{
		pkgs:  []string{"supervisor/probe"},
		notOn: []string{"daemon/...", "hostconfig", mcpSDK},
		why:   "the upgrade probe is a short host of its own: it starts a candidate through the supervisor and speaks JSON-RPC through the wire code, knowing nothing of the daemon or hosts' files, which the command reads",
	},
	{
		pkgs:  []string{"supervisor"},
		notOn: []string{"supervisor/probe"},
		why:   "the relay carries a host's session and never speaks for one: the probe is reused by nothing in it",
	},
	{
		pkgs:  []string{"supervisor/mcprules"},
		notOn: []string{"./...", mcpSDK},
		but:   []string{"jsonrpc", "policy", "secrets", "internal/field", "internal/pathrule", "internal/yamlnode"},
		why:   "the MCP rules read messages through the wire code and decide from the policy's settings: they know nothing of the relay's requests, processes or restarts, which call them through one narrow interface",
	},
	{
		pkgs:  []string{"secrets"},
		notOn: []string{"./...", mcpSDK},
		why:   "the secret scanner is pure: it reads a JSON value's strings and knows nothing of MCP, the relay or the policy, whose tools/call rule (supervisor/mcprules) uses it",
	},
	{
		pkgs:  []string{"supervisor/pins"},
		notOn: []string{"./...", mcpSDK},
		but:   []string{"supervisor/mcprules", "secrets", "contract", "contract/scan", "contract/override", "lock", "jsonrpc", "policy", "internal/..."},
		why:   "the pin rule holds a server to its lock through the rule seam alone: it compares what the server says (contract, as the policy overrides it and the scanner judges it) with the lock's entry (lock) and answers through mcprules, knowing nothing of the relay, processes or the sandbox, which know nothing of pins",
	},
	{
		pkgs:  []string{"supervisor/serverreq"},
		notOn: []string{"./...", mcpSDK},
		but:   []string{"supervisor/mcprules", "supervisor/audit", "supervisor/diagnose", "secrets", "jsonrpc", "policy", "internal/..."},
		why:   "the policy for the server's own requests decides from the policy's settings and reads messages as JSON: the relay asks it about each request and the rule seam carries its modern half, so it knows nothing of the relay's ids, processes or restarts",
	},
	{
		pkgs:  []string{"supervisor/audit"},
		notOn: []string{"./...", mcpSDK},
		but:   []string{"internal/field", "jsonrpc", "secrets"},
		why:   "the audit log is told plain values (a method, raw params, an outcome, a code, byte counts) and knows nothing of the relay, policy or confinement, so every relay of a process can share its writer of a file; it reads names as the MCP rules do, through the wire code (jsonrpc.ExactMember)",
	},
	{
		pkgs:  []string{"supervisor/diagnose"},
		notOn: []string{"./...", mcpSDK},
		but:   []string{"internal/field"},
		why:   "the diagnosis is pure: it is given the policy's facts as plain values and the host's file system as an interface, so it runs outside the relay's lock and tests give it a made-up host",
	},
	{
		pkgs:  []string{"policy"},
		notOn: []string{"./..."},
		but:   []string{"internal/field", "internal/pathrule", "internal/yamlnode"},
		why:   "policy is a leaf that every layer reads (internal/field, the error vocabulary it shares with sandbox, internal/pathrule, the path rules every layer applies, and internal/yamlnode, the syntax-tree questions it shares with daemon/config, are leaves too)",
	},
	{
		pkgs:  []string{"egress"},
		notOn: []string{"./...", mcpSDK},
		but:   []string{"policy", "internal/..."},
		why:   "the egress proxy decides and carries a confined server's connections from the policy's host rules: it is handed the namespace's listeners as plain sockets and knows nothing of the sandbox that made them, the supervisor that wires and audits it, or MCP",
	},
	{
		pkgs:  []string{"launch"},
		notOn: []string{"./...", mcpSDK},
		but:   []string{"policy", "internal/field", "internal/pathrule", "internal/yamlnode", "internal/cmdline"},
		why:   "launch reads a launch line and the host for the command, which hands what it finds to the policy: it knows nothing of confinement, supervision or MCP (internal/cmdline, a leaf, quotes the prepare command it names as the CLI quotes commands)",
	},
	{
		pkgs:  []string{"resolve"},
		notOn: []string{"supervisor/...", "sandbox/...", "healthcheck", "daemon/...", "demo", mcpSDK},
		why:   "resolve settles what a server runs under (launch line, policy, overrides, host) for every command and the daemon to share: it sits above launch and policy and knows nothing of confinement, supervision or MCP (the one policy → sandbox.Spec translation is supervisor.SpecOf), so that resolving links no relay and no cgo (the demo's static example server resolves as run does)",
	},
	{
		pkgs:  []string{"internal/logsink"},
		notOn: append([]string{"./..."}, thirdParty...),
		but:   []string{"github.com/coreos/go-systemd/v22/journal"},
		why:   "the daemon's log sink is a leaf the daemon configures: it knows the journal's protocol (through go-systemd's journal, which imports only the standard library) and files, nothing of the daemon, the supervisor or MCP",
	},
	{
		pkgs:  []string{"daemon/config"},
		notOn: []string{"./...", mcpSDK},
		but:   []string{"policy", "internal/field", "internal/pathrule", "internal/yamlnode"},
		why:   "the daemon's configuration is pure data like policy, read by the daemon and by wrap --daemon: it reads the file into entries and their overrides, and leaves resolving, launching and supervising them to the daemon (policy's leaves, the error vocabulary and the path rules, it shares)",
	},
	{
		pkgs:  []string{"hostconfig"},
		notOn: append([]string{"./..."}, thirdParty...),
		but:   []string{"github.com/tailscale/hujson"},
		why:   "hosts' configuration files are edited in place by wrap and by wrap --daemon on the daemon's file: bytes in, bytes out through hujson's exact syntax tree, knowing nothing of policies, the daemon or supervision",
	},
	{
		pkgs:  []string{"contract"},
		notOn: append([]string{"./..."}, thirdParty...),
		but:   []string{"github.com/gowebpki/jcs", "internal/linediff"},
		why:   "a server's contract (canonical form, hash, diff) is pure and one for all: the lock, the relay's pin rule, the pins commands and upgrade must hash alike, so it knows nothing of files, relays or policy, and only RFC 8785's library and the shared line diff beside the standard one",
	},
	{
		pkgs:  []string{"internal/linediff"},
		notOn: []string{"./..."},
		why:   "the line diff is a leaf that wrap's diff of a host's file and the contract's diff of a server's texts share, so neither imports the other",
	},
	{
		pkgs:  []string{"contract/..."},
		notOn: []string{"supervisor/...", "sandbox/...", "daemon/...", "resolve", "launch", "lock", mcpSDK},
		why:   "what a server tells the model is judged (contract/scan) and edited by the operator (contract/override) purely, from the item and the policy's plain settings: the pin rule, the pins commands and upgrade call them alike, and they know nothing of relays, files or processes",
	},
	{
		pkgs:  []string{"lock"},
		notOn: append([]string{"./..."}, thirdParty...),
		but:   []string{"contract", "internal/field", "internal/linediff", "github.com/gowebpki/jcs", "github.com/tailscale/hujson", "golang.org/x/sys/unix"},
		why:   "the lock file is data and file I/O that the relay, prepare, the pins commands and upgrade share from several processes: it knows contracts and nothing of who pins, so none of them drags another in",
	},
	{
		pkgs:  []string{"notify"},
		notOn: append([]string{"./..."}, thirdParty...),
		but:   []string{"github.com/godbus/dbus/v5"},
		why:   "the desktop notification is the one place mcpsandbox talks to a desktop: a summary and a body over the session bus, knowing nothing of approvals, the lock or the relay, which decide when to notify",
	},
	{
		pkgs:  []string{"npmregistry"},
		notOn: []string{"./...", mcpSDK},
		why:   "npmregistry asks an npm registry what a package is and checks its integrity, signatures and age for prepare, wrap and upgrade: it is told the registry, the clock and the cooldown, and knows nothing of policy, the lock or confinement, nor of the rest of mcpsandbox",
	},
	{
		pkgs:  []string{"./..."},
		notOn: []string{"internal/testregistry"},
		why:   "the loopback npm registry (keys, signatures, attestations and tampering made by the test) is for tests only: no build links it",
	},
	{
		pkgs:  []string{"packaging"},
		notOn: append([]string{"./..."}, thirdParty...),
		why:   "packaging only embeds the files the packages ship (units, AppArmor profile) and fills in the unit's command line, for `mcpsandbox service` and the package builder to share",
	},
	{
		pkgs:  []string{"cmd/mcpsandbox"},
		notOn: []string{"packaging/nfpm", "github.com/goreleaser/..."},
		why:   "nfpm (and the git, crypto and signing code it brings) builds the packages; it has no place in the binary hosts start for every server",
	},
	{
		pkgs:  []string{"policies"},
		notOn: []string{"./..."},
		why:   "the built-in policy files are data that the commands and the policy loader read: the package only embeds them",
	},
	{
		pkgs:  []string{"internal/field"},
		notOn: []string{"./..."},
		why:   "the error vocabulary is shared by policy and sandbox, which may not import each other: it must import neither",
	},
	{
		pkgs:  []string{"internal/yamlnode"},
		notOn: []string{"./..."},
		why:   "the syntax-tree questions policy and daemon/config both ask are a leaf, so that neither imports the other's internals",
	},
	{
		pkgs:  []string{"internal/pathrule"},
		notOn: []string{"./..."},
		why:   "the path rules (what lies within a directory, a server's PATH) are applied alike by policy, launch, sandbox and the init stage, which may not import one another: it must import none of them",
	},
	{
		pkgs:  []string{"./..."},
		notOn: []string{"cmd/..."},
		why:   "the commands are the top: nothing imports them",
	},
	{
		pkgs:  []string{"healthcheck", "sandbox/...", "policy"},
		notOn: []string{"supervisor/...", "daemon/..."},
		why:   "imports point down cmd → daemon → supervisor → {healthcheck, sandbox, policy}, never back up",
	},
	{
		pkgs:  []string{"daemon"},
		notOn: []string{mcpSDK, "demo", "std:net/http"},
		why:   "the daemon is linked into the mcpsandbox binary that hosts start for every server (connect is its client side): it relays JSON-RPC lines through the supervisor and speaks its own socket protocol, with no SDK or HTTP",
	},
	{
		pkgs:  []string{"supervisor/...", "resolve", "launch", "policy", "sandbox/...", "healthcheck", "jsonrpc", "egress", "internal/...", "demo", "cmd/mcpsandbox-demo", "daemon/config"},
		notOn: []string{"daemon"},
		why:   "only the CLI (cmd/mcpsandbox) uses the daemon: it maps flags to daemon.Run and speaks the client side; nothing below the daemon knows it",
	},
	{
		pkgs:  []string{"supervisor/..."},
		notOn: []string{"daemon/..."},
		why:   "imports point down cmd → daemon → supervisor, never back up",
	},
	{
		pkgs:  []string{"supervisor/...", "sandbox/...", "launch", "resolve", "policy", "egress", "jsonrpc", "healthcheck", "daemon/config"},
		notOn: []string{"provenance/...", "github.com/sigstore/...", "github.com/theupdateframework/..."},
		why:   "verifying provenance links sigstore-go's large tree (Rekor, TUF, protobuf, timestamping): only the commands that prepare or upgrade a package verify, so the relay, the sandbox and what resolves a server for run never link it",
	},
	{
		pkgs:  []string{"provenance"},
		notOn: []string{"./..."},
		why:   "provenance verification is told a bundle, a package's name, version and integrity and a trusted root, and answers who built it: it knows nothing of locks, registries or the commands that call it",
	},
}
