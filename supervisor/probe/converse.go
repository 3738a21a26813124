package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// Listing is what a server told the probe: its initialize result and every
// page of each list it serves, in the order they came.
type Listing struct {
	Initialize json.RawMessage
	// Pages maps a list method (tools/list, prompts/list, resources/list,
	// resources/templates/list) to its result pages; a method the server
	// declares no capability for is absent.
	Pages map[string][]json.RawMessage
}

// Bounds of one probe: a server that pages forever or answers with
// endless lines is cut off with an error, not followed.
const (
	// MaxPages is how many pages of one list are read.
	MaxPages = 100
	// maxLine is the longest message read, as the relay's default bound.
	maxLine = 16 << 20
)

// protocolVersion is the revision the probe asks for; a server answers
// with the one it speaks, and lists the same either way.
const protocolVersion = "2025-11-25"

// listsOf are the list methods of each capability a server declares.
var listsOf = []struct {
	capability string
	methods    []string
}{
	{"tools", []string{"tools/list"}},
	{"prompts", []string{"prompts/list"}},
	{"resources", []string{"resources/list", "resources/templates/list"}},
}

// Converse speaks to a server on its standard streams: to is its stdin,
// from its stdout. It initializes, says initialized, pages every list of
// the capabilities the server declares (cursor by cursor, at most MaxPages
// each) and returns what it got. Requests of the server are answered
// (ping with an empty result, anything else "method not found": the probe
// has no roots, sampling or elicitation to offer); its notifications are
// ignored. Cancelling ctx ends the conversation with ctx's error; the
// caller then kills the server, which ends from's reads.
func Converse(ctx context.Context, to io.Writer, from io.Reader) (Listing, error) {
	c := &conversation{to: to, answers: make(chan answer), done: ctx.Done()}
	go c.read(from)
	init, err := c.call(ctx, "initialize", map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]string{"name": "mcpsandbox-upgrade-probe", "version": "1"},
	})
	if err != nil {
		return Listing{}, err
	}
	if err := c.send(jsonrpc.NewNotification("notifications/initialized", nil)); err != nil {
		return Listing{}, err
	}
	l := Listing{Initialize: init, Pages: map[string][]json.RawMessage{}}
	caps := jsonrpc.MemberValue(init, "capabilities")
	for _, kind := range listsOf {
		if v := jsonrpc.MemberValue(caps, kind.capability); v == nil || string(v) == "null" {
			continue
		}
		for _, m := range kind.methods {
			pages, err := c.pages(ctx, m)
			if err != nil {
				return Listing{}, err
			}
			l.Pages[m] = pages
		}
	}
	return l, nil
}

type answer struct {
	id     string
	result json.RawMessage
	err    json.RawMessage
}

type conversation struct {
	mu      sync.Mutex // the reader answers the server's requests too
	to      io.Writer
	next    int
	answers chan answer
	readErr error // set before answers is closed
	done    <-chan struct{}
}

// pages is every page of the list method, merged by the caller.
func (c *conversation) pages(ctx context.Context, method string) ([]json.RawMessage, error) {
	var pages []json.RawMessage
	var params any // none on the first page: "params": null is refused by some servers
	seen := map[string]bool{}
	for len(pages) < MaxPages {
		res, err := c.call(ctx, method, params)
		if err != nil {
			return nil, err
		}
		pages = append(pages, res)
		cursor, _ := jsonrpc.StringValue(jsonrpc.MemberValue(res, "nextCursor"))
		if cursor == "" {
			return pages, nil
		}
		if seen[cursor] {
			return nil, fmt.Errorf("%s: the server gave the cursor %q twice: its pages never end", method, cursor)
		}
		seen[cursor] = true
		params = map[string]any{"cursor": cursor}
	}
	return nil, fmt.Errorf("%s: more than %d pages: the probe reads no further", method, MaxPages)
}

// call sends a request and waits for its answer.
func (c *conversation) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.next++
	id := strconv.Itoa(c.next)
	var raw []byte
	if params != nil {
		var err error
		if raw, err = json.Marshal(params); err != nil {
			return nil, err
		}
	}
	if err := c.send(jsonrpc.NewRequest([]byte(id), method, raw)); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: no answer: %w", method, context.Cause(ctx))
		case a, ok := <-c.answers:
			if !ok {
				return nil, fmt.Errorf("%s: %w", method, c.readErr)
			}
			if a.id != id {
				continue // an answer to nothing the probe asked: ignored
			}
			if a.err != nil {
				return nil, fmt.Errorf("%s: the server answered with an error: %s", method, a.err)
			}
			return a.result, nil
		}
	}
}

func (c *conversation) send(msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.to.Write(msg); err != nil {
		return fmt.Errorf("writing to the server: %w", err)
	}
	return nil
}

// errEnded is the read side's error once the server's stdout ended.
var errEnded = errors.New("the server ended its output (it exited?) before it answered")

// read passes the server's answers to call and answers its requests,
// until from ends.
func (c *conversation) read(from io.Reader) {
	defer close(c.answers)
	lr := jsonrpc.NewLineReader(from, maxLine)
	var f jsonrpc.Frame
	var sc jsonrpc.Scanner
	var b jsonrpc.Batch
	for {
		if err := lr.Next(&f); err != nil {
			c.readErr = errEnded
			if !errors.Is(err, io.EOF) {
				c.readErr = fmt.Errorf("reading the server's output: %w", err)
			}
			return
		}
		if f.Oversize {
			c.readErr = fmt.Errorf("the server sent a message of %d bytes, over the probe's bound of %d", f.Size, maxLine)
			return
		}
		if jsonrpc.IsBlank(f.Line) || sc.Scan(f.Line, &b) != nil {
			continue // not JSON: a server's stray output, which the relay would drop too
		}
		for i := range b.Msgs {
			e := &b.Msgs[i]
			line := f.Line
			if b.IsArray {
				line = f.Line[b.Spans[i][0]:b.Spans[i][1]]
			}
			switch e.Kind {
			case jsonrpc.Request:
				c.answerRequest(e, line)
			case jsonrpc.Response:
				a := answer{id: idText(e.ID(line))}
				if e.HasError {
					a.err = bytes.Clone(e.ErrorValue)
				} else {
					a.result = bytes.Clone(e.Result)
				}
				select {
				case c.answers <- a:
				case <-c.done:
					return
				}
			}
		}
	}
}

// answerRequest answers a request of the server: the probe offers nothing.
func (c *conversation) answerRequest(e *jsonrpc.Envelope, line []byte) {
	id := e.ID(line)
	if e.MethodIs("ping") {
		_ = c.send(jsonrpc.NewResult(id, []byte("{}")))
		return
	}
	_ = c.send(jsonrpc.NewError(id, -32601, "the upgrade probe offers no "+e.MethodString(), nil))
}

// idText is an id as the probe wrote it: its own ids are numbers written
// as strings of digits, so a string id "1" and a number 1 both match.
func idText(raw []byte) string {
	if s, ok := jsonrpc.StringValue(raw); ok {
		return s
	}
	return string(raw)
}
