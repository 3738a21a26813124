package pins

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/contract"
	"github.com/mcpsandbox/mcpsandbox/contract/scan"
	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"
)

// Options say whose pins to enforce and where they are.
type Options struct {
	ID   string // the server's identity: its entry's key in the lock (launch's state name)
	Name string // the name users know it by: logs and the commands messages name
	Path string // the lock file
	Mode string // policy.PinTOFU, PinStrict or PinOff
	Log  *slog.Logger
	Now  func() time.Time // when an item was seen; nil: time.Now

	// Overrides are the policy's tool overrides (policy.ParseToolOverrides),
	// by the server's own tool names: applied to each tools/list page
	// before it is compared and forwarded, so the lock pins what the host sees.
	Overrides map[string]policy.ToolOverride
	// Scan is what the scanner knows of the server from its policy
	// (scan.ForPolicy); Server and Others are filled here (Neighbours).
	Scan scan.Context
	// Neighbours are the other servers whose tools the same host sees (a
	// daemon config's), by their ids in the lock → their --tool-prefix:
	// the tools the lock pins of them are the scanner's Others, read as
	// the lock is (at a start, and when it changed). Nil: none.
	Neighbours map[string]string
}

// Held is one item this session holds for approval.
type Held struct {
	Item   string // as users name it, e.g. "tool:write_file"
	Reason string // "new", "changed", "finding" or "unpinned"
}

// Rule is the pin rule of one session.
type Rule struct {
	o Options

	mu       sync.Mutex // the relay calls under its lock; Held is read from elsewhere (status)
	approved lock.Contract
	pending  lock.Contract          // the lock's held items of the server: a held finding stays one
	scanCtx  scan.Context           // Opts.Scan with the neighbours the lock names
	pinning  map[contract.Kind]bool // tofu's first sight: kinds pinned as they are listed
	held     map[string]hold        // by item name
	stamp    fileStamp              // the lock as last read
	pages    map[string]page        // the last page of each list (method and cursor) and what the host got of it

	tooMany   bool              // more items were held than maxHeld (logged once)
	offLogged map[string]string // pin mode off: item → the version whose difference was logged
}

type hold struct {
	kind   contract.Kind
	key    string
	reason string
	hash   string // what the server served
	rules  string // a finding's: the scanner's rules that hold it, e.g. "sensitive-path"
}

// page is one list page as compared: its sum and the result the host got
// (nil: the server's).
type page struct {
	sum [sha256.Size]byte
	out []byte
}

// New reads the lock: a lock that does not load fails the start with the
// lock's own error (file:line:col and the fix), never re-pinned. Under pin
// mode off a server the lock does not pin gets no rule (nil).
func New(o Options) (*Rule, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	r := &Rule{o: o, held: map[string]hold{}, pages: map[string]page{}, offLogged: map[string]string{}}
	st := stampOf(o.Path)
	f, err := lock.Load(o.Path)
	if err != nil {
		return nil, err
	}
	r.take(f, st)
	if !r.pinned() && o.Mode == policy.PinOff {
		o.Log.Info("MCP server is not pinned in the lock; pin mode off pins and holds nothing", "lock", o.Path)
		if len(o.Overrides) == 0 {
			return nil, nil // nothing to compare with and nothing to override: no rule at all
		}
	}
	return r, nil
}

var allKinds = []contract.Kind{contract.Tool, contract.Prompt, contract.Resource, contract.ResourceTemplate,
	contract.Instructions, contract.ServerInfo, contract.Capabilities}

// take makes f's approved contract of the server the one enforced.
func (r *Rule) take(f *lock.File, st fileStamp) {
	r.stamp = st
	r.approved, r.pending = lock.Contract{}, lock.Contract{}
	if s := f.Servers[r.o.ID]; s != nil {
		r.approved, r.pending = s.Contract, s.Pending
	}
	r.scanCtx = r.neighbours(f)
	r.pinning = r.firstSight()
	clear(r.pages)
	r.holdPending(&r.pending)
}

// holdPending holds what the lock holds for the server (another session
// saw it changed), so a session that calls before it lists is refused too;
// this session's own lists release an item the server serves as approved.
func (r *Rule) holdPending(pending *lock.Contract) {
	for _, it := range pending.Items() {
		name := contract.ItemName(it.Kind, it.Key)
		e, _ := pending.Entry(it.Kind, it.Key)
		if !it.Kind.Keyed() || e.Reason == "removed" || len(r.held) >= maxHeld {
			continue
		}
		if _, ok := r.held[name]; !ok {
			r.held[name] = hold{kind: it.Kind, key: it.Key, reason: e.Reason, hash: it.Hash, rules: storedRules(e.Findings)}
		}
	}
}

// Held returns the items held this session, sorted.
func (r *Rule) Held() []Held {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Held, 0, len(r.held))
	for name, h := range r.held {
		out = append(out, Held{Item: name, Reason: h.reason})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Item < out[j].Item })
	return out
}

func (r *Rule) HostRequest(msg []byte, e *jsonrpc.Envelope) (mcprules.Verdict, mcprules.Call) {
	if r.o.Mode == policy.PinOff && !serverWide(e) && !listMethod(e) {
		return mcprules.Verdict{}, nil
	}
	switch m := e.MethodString(); m {
	case "initialize", "server/discover":
		return mcprules.Verdict{}, &call{r: r, method: m}
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		cursor, _ := keyOf(e.Params, "cursor")
		return mcprules.Verdict{}, &call{r: r, method: m, cursor: cursor}
	case "tools/call":
		return r.called(contract.Tool, e.Params, "name")
	case "prompts/get":
		return r.called(contract.Prompt, e.Params, "name")
	case "resources/read":
		return r.called(contract.Resource, e.Params, "uri")
	}
	return mcprules.Verdict{}, nil
}

// serverWide reports whether e's result tells the server's instructions,
// serverInfo and capabilities: initialize, or a stateless session's
// server/discover.
func serverWide(e *jsonrpc.Envelope) bool {
	return e.MethodIs("initialize") || e.MethodIs("server/discover")
}

func listMethod(e *jsonrpc.Envelope) bool {
	_, ok := contract.ListKind(e.MethodString())
	return ok
}

// ServerNotification lets every notification through; a list_changed
// drops what was compared, so the next list is compared afresh.
func (r *Rule) ServerNotification(msg []byte, e *jsonrpc.Envelope) bool {
	switch e.MethodString() {
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		r.mu.Lock()
		clear(r.pages)
		r.mu.Unlock()
	}
	return true
}

// call follows an initialize or a list request to its result.
type call struct {
	r      *Rule
	method string
	cursor string
}

func (c *call) Timeout() time.Duration { return 0 }
func (c *call) End()                   {}

func (c *call) Result(result []byte) ([]byte, *mcprules.Refusal) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	if c.method == "initialize" || c.method == "server/discover" {
		return c.r.initialized(c.method, result)
	}
	return c.r.listed(c.method, c.cursor, result)
}

// unreadable refuses a result that cannot be compared: it is not passed
// unchecked.
func unreadable(method string, err error) *mcprules.Refusal {
	return &mcprules.Refusal{Kind: mcprules.Unreadable, Reason: "cannot be compared with the lock",
		Message: fmt.Sprintf("MCP server sent a %s result mcpsandbox cannot compare with its lock (%v)", method, err)}
}

// commands names the commands that show and approve an item ("": all
// that is held of the server).
func (r *Rule) commands(item string) string {
	name := cmdline.ShellWord(r.o.Name)
	if def, err := lock.DefaultPath(); err != nil || def != r.o.Path {
		name = "--lock " + cmdline.ShellWord(r.o.Path) + " " + name
	}
	approve := "--all"
	if item != "" {
		approve = cmdline.ShellWord(item)
	}
	return "see it with `mcpsandbox pins diff " + name + "`, approve it with `mcpsandbox pins approve " + name + " " + approve + "`"
}

// keyOf reads the member naming the item a request asks for, as every
// server would read it: absent is "" and true; spelt more than one way, or
// not a string, is false (the request cannot be checked).
func keyOf(params []byte, member string) (string, bool) {
	if params == nil {
		return "", true
	}
	raw, ok := jsonrpc.ExactMemberValue(params, member)
	switch {
	case !ok:
		return "", false
	case raw == nil:
		return "", true
	case len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0:
		return string(raw[1 : len(raw)-1]), true
	}
	return jsonrpc.StringValue(raw)
}

// pinned reports whether the server has an approved contract: the lock's,
// or what this session pinned at first sight.
func (r *Rule) pinned() bool { return !r.approved.Empty() }

// PinnedTools are the tools the lock pins for the server, as their
// canonical text (the policy's overrides applied): what other rules may
// read of the approved contract without reading the lock again.
func (r *Rule) PinnedTools() []json.RawMessage {
	var tools []json.RawMessage
	for _, e := range r.approved.Tools {
		tools = append(tools, e.Text)
	}
	return tools
}
