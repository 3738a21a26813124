package diagnose

import (
	"bytes"
	"encoding/json"
	"strings"
)

// A server may start well and fail only at its first write: server-memory
// keeps its graph beside its code, which a read-only grant makes read-only,
// and answers every change with a tool error quoting EROFS. The host (and
// the model) then gets, beside the server's own text, what of the
// confinement caused it and the setting that fixes it.

// toolErrorMarks are what a tool error must contain to be read at all, so
// other results are passed through untouched and unparsed.
var toolErrorMarks = [][]byte{[]byte("EROFS"), []byte("EACCES"), []byte("ENOENT"), []byte("[Errno ")}

// Explainable reports, reading no more than the bytes, whether a tools/call
// result (its raw result member) is a tool error worth diagnosing: cheap
// enough for the relay's hot path, so only these go to ToolError.
func Explainable(result []byte) bool {
	if !bytes.Contains(result, []byte(`"isError":true`)) {
		return false
	}
	for _, m := range toolErrorMarks {
		if bytes.Contains(result, m) {
			return true
		}
	}
	return false
}

// ToolError reads the text of a tools/call result (its raw result member)
// that is a tool error and says what of the confinement caused it, from
// the policy alone (grantable.go); false when the policy explains nothing,
// or the result is no tool error.
func ToolError(result []byte, f Facts) (Diagnosis, bool) {
	if !Explainable(result) {
		return Diagnosis{}, false
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &res) != nil {
		return Diagnosis{}, false
	}
	var lines []string
	for _, c := range res.Content {
		if c.Type == "text" {
			lines = append(lines, strings.Split(c.Text, "\n")...)
		}
	}
	for _, found := range findCauses(lines) {
		if d, ok := toolCause(found, &f); ok {
			return d, true
		}
	}
	return Diagnosis{}, false
}
