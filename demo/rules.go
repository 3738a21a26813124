package demo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/resolve"
)

// WipeTool is the example server's tool the demo's policy denies.
const WipeTool = "wipe"

// demoSecret is the API key the demo passes to the denied call: the audit
// line must show it masked.
const demoSecret = "sk-demo-3f9a1c"

type wipeArgs struct {
	Confirm bool   `json:"confirm"`
	APIKey  string `json:"api_key"`
}

// Denial is what the host got for a call the policy denies.
type Denial struct {
	Code    int64
	Message string
}

// withRules adds the demo's MCP rules to p: one denied tool and an audit
// log in a fresh directory, whose path it returns.
func (d *driver) withRules(p *policy.Policy) (string, error) {
	dir, err := os.MkdirTemp("", "mcpsandbox-demo-audit-")
	if err != nil {
		return "", fmt.Errorf("audit log directory: %w", err)
	}
	d.audit = filepath.Join(dir, "audit.jsonl")
	p.DenyTools = append(p.DenyTools, WipeTool)
	p.AuditLog = d.audit
	return d.audit, nil
}

func (d *driver) next() int {
	d.step++
	return d.step
}

// denied calls the denied tool anyway, as a host that kept an old tool list
// would: mcpsandbox answers, the server never sees the call.
func (d *driver) denied(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	d.rep.Calls++
	_, err := d.cs.CallTool(ctx, &mcp.CallToolParams{Name: WipeTool, Arguments: map[string]any{"confirm": true, "api_key": demoSecret}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		return fmt.Errorf("%s: the policy denies it, yet the call got %v", WipeTool, err)
	}
	d.rep.Failed++
	d.rep.Denied = Denial{Code: werr.Code, Message: werr.Message}
	d.printf("%d. %s {confirm: true, api_key: …} anyway → error %d: %s\n   (answered by mcpsandbox; the call never reached the server)\n\n", d.next(), WipeTool, werr.Code, werr.Message)
	return nil
}

// auditLine shows the audit log's line for the denied call: the secret
// argument masked. The relay's audit writer appends it when the call ends,
// off the relay's path, so the file is read until it is there.
func (d *driver) auditLine(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	line, err := findAuditLine(d.audit, WipeTool)
	for err != nil {
		select {
		case <-ctx.Done():
			return err
		case <-tick.C:
			line, err = findAuditLine(d.audit, WipeTool)
		}
	}
	if strings.Contains(line, demoSecret) {
		return fmt.Errorf("the audit log holds the api_key in clear: %s", line)
	}
	d.rep.AuditLine = line
	d.printf("%d. Its line in the audit log (%s, mode 0600), the api_key masked:\n   %s\n\n", d.next(), d.audit, line)
	return nil
}

func findAuditLine(path, tool string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"tool":"`+tool+`"`) {
			return sc.Text(), nil
		}
	}
	return "", fmt.Errorf("audit log %s has no line for %s", path, tool)
}

// ChooseAsRun chooses the policy for cmd as `mcpsandbox run` does without
// --policy, through the same resolution: the built-in the command selects,
// applied to this host.
func ChooseAsRun(cmd []string) (Chosen, error) {
	r, err := resolve.Resolve(resolve.Request{Command: cmd, Host: launch.FromProcess()})
	if err != nil {
		return Chosen{}, err
	}
	return Chosen{Policy: r.Policy, Name: r.Ref, Why: r.Why()}, nil
}
