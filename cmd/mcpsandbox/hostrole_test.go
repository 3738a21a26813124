package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// asHost as the first argument makes the test binary play an MCP host that
// starts `mcpsandbox run` the way desktop hosts do, from wherever it was
// itself started (a login session, a scope, a service), described by the
// JSON hostSpec in hostSpecEnv. It prints a hostReport on stdout.
const (
	asHost      = "-test.as-host"
	hostSpecEnv = "MCPSANDBOX_TEST_HOST_SPEC"
)

type hostSpec struct {
	Command []string // mcpsandbox and its arguments (maybe wrapped)
	Env     []string // its whole environment
	Sibling bool     // keep another process in the host's cgroup, as a desktop app does
	Bombs   bool     // run the memory and fork bombs
}

// hostReport is what the host saw.
type hostReport struct {
	HostCgroup       string
	SupervisorPid    int
	SupervisorCgroup string // while the session ran
	ConnectError     string // when the session could not start
	ConnectCode      int64
	Limits           map[string]any
	Bombs            map[string]bombResult
	Killed           string // how mcpsandbox ended after SIGKILL
}

type bombResult struct {
	Code      int64  // of the error the in-flight call got
	Reason    string // its data.reason
	NextError string // of the call after the restart; "" when it succeeded
}

func hostRole() int {
	var spec hostSpec
	if err := json.Unmarshal([]byte(os.Getenv(hostSpecEnv)), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "host role:", err)
		return 2
	}
	var rep hostReport
	rep.HostCgroup = ownCgroupV2(os.Getpid())
	if spec.Sibling {
		sib := exec.Command("sleep", "600")
		if err := sib.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "host role:", err)
			return 2
		}
		defer func() { sib.Process.Kill(); sib.Wait() }()
	}
	err := hostSession(spec, &rep)
	json.NewEncoder(os.Stdout).Encode(rep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "host role:", err)
		return 1
	}
	return 0
}

func hostSession(spec hostSpec, rep *hostReport) error {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	cmd.Env = spec.Env
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "launch-test-host", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		rep.ConnectError = err.Error()
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			rep.ConnectCode = werr.Code
		}
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
		return nil
	}
	defer cs.Close()
	rep.SupervisorPid = cmd.Process.Pid
	rep.SupervisorCgroup = ownCgroupV2(rep.SupervisorPid)

	text, err := callText(ctx, cs, "limits")
	if err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	if err := json.Unmarshal([]byte(text), &rep.Limits); err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	if spec.Bombs {
		rep.Bombs = map[string]bombResult{}
		for _, bomb := range []string{"membomb", "forkbomb"} {
			rep.Bombs[bomb] = runBomb(ctx, cs, bomb)
		}
	}
	// A SIGKILL gives mcpsandbox no chance to clean up: what it leaves
	// behind is for systemd and the kernel to collect.
	syscall.Kill(rep.SupervisorPid, syscall.SIGKILL)
	err = cmd.Wait()
	rep.Killed = fmt.Sprint(err)
	return nil
}

func runBomb(ctx context.Context, cs *mcp.ClientSession, tool string) bombResult {
	var r bombResult
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		r.Code = werr.Code
		var data struct {
			Reason string `json:"reason"`
		}
		json.Unmarshal(werr.Data, &data)
		r.Reason = data.Reason
	} else {
		r.Reason = fmt.Sprintf("not a JSON-RPC error: %v", err)
	}
	if _, err := callText(ctx, cs, "instance"); err != nil {
		r.NextError = err.Error()
	}
	return r
}

func callText(ctx context.Context, cs *mcp.ClientSession, tool string) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) == 0 {
		return "", fmt.Errorf("%s answered with an error: %+v", tool, res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("%s answered %T", tool, res.Content[0])
	}
	return tc.Text, nil
}

// ownCgroupV2 is pid's cgroup v2 path ("" when unknown).
func ownCgroupV2(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p
		}
	}
	return ""
}
