package supervisor

import (
	"encoding/json"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/jsonrpc"
)

// Every code of mcpsandbox's lies in its private block, outside JSON-RPC's
// reserved range, and its answer names mcpsandbox and a stable kind.
func TestOwnErrorsCarrySourceAndKind(t *testing.T) {
	seen := map[string]bool{}
	for code, kind := range codeKinds {
		if code >= -32768 && code <= -32000 {
			t.Errorf("code %d (%s) is inside JSON-RPC's reserved -32768..-32000", code, kind)
		}
		if code < -31199 || code > -31101 {
			t.Errorf("code %d (%s) is outside mcpsandbox's block -31199..-31101", code, kind)
		}
		if seen[kind] {
			t.Errorf("kind %q is given to two codes", kind)
		}
		seen[kind] = true
		var m struct {
			Error struct {
				Code int
				Data map[string]any
			}
		}
		if err := json.Unmarshal(errorResponse([]byte("7"), code, "m", nil), &m); err != nil {
			t.Fatal(err)
		}
		d := m.Error.Data
		if m.Error.Code != code || d["source"] != "mcpsandbox" || d["kind"] != kind || d["reason"] == "" {
			t.Errorf("code %d: data %v, want source mcpsandbox, kind %q and a reason", code, d, kind)
		}
	}
	var m struct{ Error struct{ Data map[string]any } }
	json.Unmarshal(errorResponse(nil, jsonrpc.CodeInvalidParams, "m", nil), &m)
	if m.Error.Data != nil {
		t.Errorf("a standard code's error got data %v; only mcpsandbox's own codes carry source and kind", m.Error.Data)
	}
}

// An error's data.kind is the audit log's word for how its request ended.
func TestKindIsOutcome(t *testing.T) {
	for o := outAnswered; o <= outIDReused; o++ {
		if c := o.code(); c != 0 && codeKinds[c] != o.String() {
			t.Errorf("outcome %s answers with code %d, whose kind is %q", o, c, codeKinds[c])
		}
	}
}
