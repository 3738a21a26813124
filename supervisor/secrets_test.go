package supervisor_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// The leak confinement cannot see: the agent read a private key through
// another tool and hands it to server-filesystem's write_file. The call is
// refused before the server sees it (no file), with the argument's path in
// the message and the audit line, never the key; --no-secret-scan lets the
// same call through, and the audit line still hides the key.
func TestSecretInArgumentsServerFilesystem(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalECPrivateKey(key)
	block := string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
	body := strings.Split(block, "\n")[1] // a line of the key itself

	for _, scan := range []bool{true, false} {
		dir := t.TempDir()
		pol := npmPolicy(t, "server-filesystem", dir)
		pol.ReadWrite = []string{writableBySandbox(t, dir)}
		pol.AuditLog = filepath.Join(t.TempDir(), "audit.log")
		pol.NoSecretScan = !scan
		r := startRelay(t, pol)
		cs := r.sdkClient("2025-06-18", nil)
		out := filepath.Join(dir, "id_ecdsa")
		_, err := callTool(t, cs, "write_file", map[string]any{"path": out, "content": block})
		_, statErr := os.Stat(out)
		cs.Close()
		r.end()
		lines := readAudit(t, pol.AuditLog, body)
		if len(lines) != 1 || lines[0].Tool != "write_file" || lines[0].Arguments["content"] != "***" || lines[0].Arguments["path"] != out {
			t.Errorf("scan %v: audit %+v", scan, lines)
		}
		if !scan {
			if err != nil || statErr != nil {
				t.Errorf("--no-secret-scan: write_file %v, file %v", err, statErr)
			}
			continue
		}
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != supervisor.CodeSecretInArguments {
			t.Fatalf("write_file with a key: %v, want error %d", err, supervisor.CodeSecretInArguments)
		}
		want := `tools/call "write_file" refused: arguments.content holds what looks like a private key (private-key); mcpsandbox never passes secrets to a server: take it out of the arguments, or, if this server is meant to get it, allow it with NoSecretScan`
		var data struct{ Kind string }
		json.Unmarshal(werr.Data, &data)
		if werr.Message != want || data.Kind != "secret-in-arguments" {
			t.Errorf("error %q, data %s\nwant %q, kind secret-in-arguments", werr.Message, werr.Data, want)
		}
		if strings.Contains(werr.Message+string(werr.Data)+r.logs.String(), body) {
			t.Error("the error or the log shows the key")
		}
		if !errors.Is(statErr, os.ErrNotExist) {
			t.Errorf("the server wrote the file: %v", statErr)
		}
		if c := lines[0].Code; c == nil || *c != supervisor.CodeSecretInArguments {
			t.Errorf("audit code %v", c)
		}
	}
}
