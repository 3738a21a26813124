package supervisor

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// A server may start well and fail only at its first write: server-memory
// keeps its graph beside its code, which a --ro grant makes read-only, and
// answers every change with a tool error quoting EROFS. The host (and the
// model) then gets, beside the server's own text, what of the confinement
// caused it and the setting that fixes it.

// toolErrorMarks are what a tool error must contain to be read at all, so
// other results are passed through untouched and unparsed.
var toolErrorMarks = [][]byte{[]byte("EROFS"), []byte("EACCES"), []byte("ENOENT"), []byte("[Errno ")}

// explainToolErrorLocked returns msg with a text item explaining the tool
// error, or msg itself when there is nothing to explain. r.mu is held.
func (r *relay) explainToolErrorLocked(msg []byte, e *jsonrpc.Envelope, req hostRequest) []byte {
	if !bytes.Contains(e.Result, []byte(`"isError":true`)) || !containsAny(e.Result, toolErrorMarks) {
		return msg
	}
	res, ok := members(e.Result)
	if !ok {
		return msg
	}
	var content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(res["content"], &content) != nil {
		return msg
	}
	var lines []string
	for _, c := range content {
		if c.Type == "text" {
			lines = append(lines, strings.Split(c.Text, "\n")...)
		}
	}
	why := r.diagnose(lines)
	if why == "" {
		return msg
	}
	item, _ := json.Marshal(map[string]string{"type": "text", "text": "mcpsandbox: " + why})
	list := bytes.TrimSuffix(bytes.TrimSpace(res["content"]), []byte("]"))
	if len(bytes.TrimSpace(list)) > 1 {
		list = append(list, ',')
	}
	res["content"] = append(append(list, item...), ']')
	enc, err := encodeObject(res)
	if err != nil {
		return msg
	}
	if r.logLimit.allow(r.log) {
		r.log.Warn("a tool call failed because of the confinement; the host's tool error says how to fix it", "cause", why)
	}
	return bytes.TrimSuffix(jsonrpc.NewResult([]byte(req.hostID), enc), []byte("\n"))
}

func containsAny(b []byte, marks [][]byte) bool {
	for _, m := range marks {
		if bytes.Contains(b, m) {
			return true
		}
	}
	return false
}
