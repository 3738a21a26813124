//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// floods are the attacks on the relay and its log: raw lines on stdout and
// stderr that the SDK would never write. Each row is a kind of the flood
// tool. Kinds that answer "this call" write a raw response under the
// JSON-RPC id of the flood call itself (see stdinTap); the SDK's own result
// follows it and the relay drops that one as not in flight.
var floods = []flood{
	{"stderr_empty", "`bytes` empty lines on stderr", floodStderrEmpty},
	{"stderr_lines", "numbered lines on stderr, `bytes` in all; with `crash`, exit 7 right after", floodStderrLines},
	{"stdout_junk", "`bytes`/2 one-byte junk lines on stdout", floodStdoutJunk},
	{"huge_id", "a response whose id, in flight nowhere, is `bytes` long", floodHugeID(false)},
	{"huge_id_invalid_utf8", "huge_id, with the id made of bytes that are not UTF-8", floodHugeID(true)},
	{"deep_nesting", "a response to this call nested `depth` deep (10001 by default), id last", floodDeep},
	{"invalid_utf8", "a response to this call with invalid UTF-8 inside a string", floodInvalidUTF8},
	{"sampling", "`count` sampling/createMessage requests to the host; with `crash`, exit 7 right after; with `deaf`, stop reading stdin first", floodSampling},
	{"oversized_mid_id", "a response to this call of `bytes` bytes (20 MiB by default) whose id sits in the middle", floodOversizedMidID},
}

type flood struct {
	kind string
	what string
	run  func(a *floodArgs, id []byte) (string, error)
}

type floodArgs struct {
	Kind  string `json:"kind"`
	Bytes int    `json:"bytes,omitempty"`
	Count int    `json:"count,omitempty"`
	Depth int    `json:"depth,omitempty"`
	Crash bool   `json:"crash,omitempty"`
	Deaf  bool   `json:"deaf,omitempty"`
}

// floodIDPrefix marks the ids of the flood's own requests to the host.
const floodIDPrefix = "hostile-flood-"

func addFloodTools(s *mcp.Server, tap *stdinTap) {
	var kinds []string
	for _, f := range floods {
		kinds = append(kinds, f.kind+": "+f.what)
	}
	mcp.AddTool(s, &mcp.Tool{Name: "flood", Description: "attack the relay; kinds:\n" + strings.Join(kinds, "\n")},
		func(ctx context.Context, _ *mcp.CallToolRequest, a floodArgs) (*mcp.CallToolResult, any, error) {
			if a.Deaf {
				tap.stopReading()
			}
			for _, f := range floods {
				if f.kind == a.Kind {
					out, err := f.run(&a, tap.lastFloodID())
					if err != nil {
						return nil, nil, err
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil, nil
				}
			}
			return nil, nil, fmt.Errorf("unknown flood kind %q", a.Kind)
		})
	mcp.AddTool(s, &mcp.Tool{Name: "flood_answers", Description: "how the relay answered the flood's requests: {errors, last_error}"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			return textResult(tap.answers()), nil, nil
		})
}

// writeRepeated writes prefix, n copies of unit, then suffix, in chunks
// (never the whole line in memory).
func writeRepeated(f *os.File, prefix string, unit []byte, n int, suffix string) error {
	chunk := bytes.Repeat(unit, max(1, (64<<10)/len(unit)))
	if _, err := f.WriteString(prefix); err != nil {
		return err
	}
	for per := len(chunk) / len(unit); n > 0; n -= per {
		k := min(n, per)
		if _, err := f.Write(chunk[:k*len(unit)]); err != nil {
			return err
		}
	}
	_, err := f.WriteString(suffix)
	return err
}

func floodStderrEmpty(a *floodArgs, _ []byte) (string, error) {
	n := orDefault(a.Bytes, 4<<20)
	return fmt.Sprintf("wrote %d empty lines to stderr", n), writeRepeated(os.Stderr, "", []byte("\n"), n, "")
}

func floodStderrLines(a *floodArgs, _ []byte) (string, error) {
	n := orDefault(a.Bytes, 1<<20)
	var b bytes.Buffer
	lines := 0
	for written := 0; written < n; lines++ {
		k := b.Len()
		fmt.Fprintf(&b, "hostile stderr line %d\n", lines)
		written += b.Len() - k
		if b.Len() > 64<<10 || written >= n {
			if _, err := os.Stderr.Write(b.Bytes()); err != nil {
				return "", err
			}
			b.Reset()
		}
	}
	if a.Crash {
		os.Exit(7)
	}
	return fmt.Sprintf("wrote %d lines to stderr", lines), nil
}

func floodStdoutJunk(a *floodArgs, _ []byte) (string, error) {
	n := orDefault(a.Bytes, 4<<20) / 2
	return fmt.Sprintf("wrote %d junk lines to stdout", n), writeRepeated(os.Stdout, "", []byte("x\n"), n, "")
}

func floodHugeID(invalid bool) func(*floodArgs, []byte) (string, error) {
	return func(a *floodArgs, _ []byte) (string, error) {
		n := orDefault(a.Bytes, 15<<20)
		unit := []byte("A")
		if invalid {
			unit = []byte{0xff}
		}
		return fmt.Sprintf("wrote a response with an id of %d bytes", n),
			writeRepeated(os.Stdout, `{"jsonrpc":"2.0","id":"`, unit, n, `","result":{}}`+"\n")
	}
}

func floodDeep(a *floodArgs, id []byte) (string, error) {
	if id == nil {
		return "", errNoID
	}
	d := orDefault(a.Depth, 10001)
	// The top-level object is one level; result holds the other d-1.
	line := `{"jsonrpc":"2.0","result":` + strings.Repeat("[", d-1) + strings.Repeat("]", d-1) + `,"id":` + string(id) + "}\n"
	_, err := os.Stdout.WriteString(line)
	return "wrote a deep response", err
}

func floodInvalidUTF8(_ *floodArgs, id []byte) (string, error) {
	if id == nil {
		return "", errNoID
	}
	line := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"bad ` + "\xff\xfe\xc0\xaf" + ` text"}]}}` + "\n"
	_, err := os.Stdout.WriteString(line)
	return "wrote invalid UTF-8", err
}

func floodSampling(a *floodArgs, _ []byte) (string, error) {
	n := orDefault(a.Count, 5000)
	var b bytes.Buffer
	for i := range n {
		b.WriteString(`{"jsonrpc":"2.0","id":"` + floodIDPrefix + strconv.Itoa(i) + `","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":1}}` + "\n")
		if b.Len() > 64<<10 || i == n-1 {
			if _, err := os.Stdout.Write(b.Bytes()); err != nil {
				return "", err
			}
			b.Reset()
		}
	}
	if a.Crash {
		os.Exit(7)
	}
	return fmt.Sprintf("sent %d sampling requests", n), nil
}

func floodOversizedMidID(a *floodArgs, id []byte) (string, error) {
	if id == nil {
		return "", errNoID
	}
	half := orDefault(a.Bytes, 20<<20) / 2
	if err := writeRepeated(os.Stdout, `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"`, []byte("x"), half, `"}]},"id":`); err != nil {
		return "", err
	}
	err := writeRepeated(os.Stdout, string(id)+`,"padding":"`, []byte("y"), half, `"}`+"\n")
	return "wrote an oversized response", err
}

var errNoID = errors.New("the flood call's JSON-RPC id was not seen on stdin")

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}
