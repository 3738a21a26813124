package supervisor_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// roleUpgradedServer speaks 2024-11-05 only in its first process (the
// marker file argv[2] does not exist yet) and, like a newer version of
// its package, every version a host asks for in the next ones. Its tool
// "crash" exits; any other tool says which process answered.
const roleUpgradedServer = "mcpsandbox-test-role=upgraded-server"

func serveUpgraded(marker string) {
	mode := "new"
	if _, err := os.Stat(marker); os.IsNotExist(err) {
		mode = "old"
		os.WriteFile(marker, nil, 0o644)
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
				Name            string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		var result string
		switch m.Method {
		case "initialize":
			v := m.Params.ProtocolVersion
			if mode == "old" {
				v = "2024-11-05"
			}
			result = fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"upgraded","version":%q}}`, v, mode)
		case "tools/call":
			if m.Params.Name == "crash" {
				os.Exit(3)
			}
			result = fmt.Sprintf(`{"content":[{"type":"text","text":%q}]}`, mode)
		default:
			result = "{}"
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, result)
	}
}

// A host asked for 2025-11-25 and the first process agreed on 2024-11-05.
// Its restarted process speaks 2025-11-25 too (an upgraded package): the
// replayed initialize asks for the session's 2024-11-05, which it then
// answers, and the session goes on, where the restart used to fail on a
// version the host never agreed to.
func TestReplayAsksForTheSessionsProtocolVersion(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := testenv.SharedDir(t, "mcpsandbox-upgraded-")
	marker := filepath.Join(dir, "started")
	pol := testPolicy([]string{exe, roleUpgradedServer, marker})
	pol.ReadWrite = append(pol.ReadWrite, dir)
	r := startRelay(t, pol)
	h := r.rawHost()
	if got := string(h.initialize("2025-11-25")["result"]); !strings.Contains(got, `"2024-11-05"`) {
		t.Fatalf("initialize: %s, want 2024-11-05 agreed", got)
	}
	h.call(`1`, "tools/call", `{"name":"crash","arguments":{}}`)
	resp := h.call(`2`, "tools/call", `{"name":"which","arguments":{}}`)
	if !strings.Contains(string(resp["result"]), `"new"`) {
		t.Errorf("after the restart: %s %s, want the new process's answer", resp["result"], resp["error"])
	}
}
