package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/pinfixture"
)

// BenchmarkPinsEcho1KiB: a 1 KiB tools/call echo through mcpsandbox with
// the server pinned in a lock, against the same with no pin rule (pin
// mode off, the lock empty), in one run. Target: ≤ 1.02×: a call of a
// pinned, unchanged tool reads no file.
func BenchmarkPinsEcho1KiB(b *testing.B) {
	text := strings.Repeat("x", 1024)
	benchPins(b, []string{bins.staticserver}, func(s *session) {
		s.call(b, "echo", map[string]any{"text": text})
	})
}

// BenchmarkPinsList118: tools/list of 118 tools (the GitLab server's
// size) with and without the lock, in one run. Target: ≤ 1.10×.
func BenchmarkPinsList118(b *testing.B) {
	benchPins(b, []string{bins.pinserver, tools118()}, func(s *session) {
		res, err := s.cs.ListTools(context.Background(), nil)
		if err != nil || len(res.Tools) != 118 {
			b.Fatalf("tools/list: %v, %d tools", err, len(res.Tools))
		}
	})
}

// benchPins runs op on two sessions of server, in turns: "lock" pinned
// in a lock (its first list pins it), "nolock" under pin mode off with
// an empty lock.
func benchPins(b *testing.B, server []string, op func(*session)) {
	dir := b.TempDir()
	run := func(flags ...string) []string {
		argv := append([]string{bins.mcpsandbox, "run", "--log-level", "warn"}, flags...)
		return append(append(argv, "--"), server...)
	}
	pinned := startSession(b, run("--lock", filepath.Join(dir, "lock.json")))
	if _, err := pinned.cs.ListTools(context.Background(), nil); err != nil { // first sight: pins
		b.Fatal(err)
	}
	pair{on: "lock", off: "nolock", warmup: 20}.run(b, pinned,
		startSession(b, run("--pin", "off", "--lock", filepath.Join(dir, "empty.json"))), op)
}

// tools118 is a contract of 118 tools shaped like the GitLab server's:
// a paragraph of description and a handful of typed parameters each.
func tools118() string {
	var c pinfixture.Contract
	for i := range 118 {
		schema := fmt.Sprintf(`{"type":"object","properties":{"project_id":{"type":"string","description":"Project ID or URL-encoded path"},`+
			`"iid":{"type":"number","description":"The internal ID of the item %d"},"title":{"type":"string"},"labels":{"type":"array","items":{"type":"string"}},`+
			`"page":{"type":"number"},"per_page":{"type":"number"}},"required":["project_id"]}`, i)
		c.Tools = append(c.Tools, &mcp.Tool{
			Name:        fmt.Sprintf("gitlab_tool_%03d", i),
			Description: fmt.Sprintf("Tool %d of a GitLab-sized server: gets, lists or changes one kind of project resource (issues, merge requests, pipelines, wiki pages) through the GitLab REST API, paged as the API pages.", i),
			InputSchema: json.RawMessage(schema),
		})
	}
	return c.Arg()
}
