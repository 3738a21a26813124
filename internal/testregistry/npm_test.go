package testregistry_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/internal/testregistry"
)

// checkWithPacote asks npm's own package fetcher (pacote, as npm install
// --verify-signatures would) for the manifest of spec on registry, with
// the keys the registry serves; it prints "ok" or npm's error code.
// (npm audit signatures would do the same but first asks Sigstore's TUF
// repository, which tests cannot reach.)
const checkWithPacote = `
const [pacotePath, registry, spec, cache] = process.argv.slice(1)
const pacote = require(pacotePath)
;(async () => {
  const { keys } = await (await fetch(registry + "-/npm/v1/keys")).json()
  const u = new URL(registry)
  const opts = { registry, cache, verifySignatures: true, fullMetadata: true,
    ["//" + u.host + u.pathname + ":_keys"]: keys.map(k => ({ ...k, pemkey: "-----BEGIN PUBLIC KEY-----\n" + k.key + "\n-----END PUBLIC KEY-----" })) }
  await pacote.manifest(spec, opts)
  console.log("ok")
})().catch(e => console.log(e.code || e.message))
`

// npm verifies the registry's signatures as npmregistry does: a good one
// passes; a forged one, one by a key no longer served and one by a key
// that expired before publishing fail with npm's own codes.
func TestNpmVerifiesTheRegistrysSignatures(t *testing.T) {
	pacote := testenv.NPMModule(t, "pacote")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH: run scripts/test-setup.sh")
	}
	published := time.Now().Add(-time.Hour)
	for _, tc := range []struct {
		name   string
		tamper func(*testregistry.Registry)
		want   string
	}{
		{"good", func(*testregistry.Registry) {}, "ok"},
		{"forged", func(r *testregistry.Registry) { r.ForgeSignature("@scope/server", "1.0.0") }, "EINTEGRITYSIGNATURE"},
		{"rotated", func(r *testregistry.Registry) { r.RotateKey() }, "EMISSINGSIGNATUREKEY"},
		{"expired", func(r *testregistry.Registry) { r.ExpireKey(published.Add(-time.Minute)) }, "EEXPIREDSIGNATUREKEY"},
	} {
		reg := testregistry.New(t)
		reg.Publish(testregistry.Package{Name: "@scope/server", Version: "1.0.0", Published: published})
		tc.tamper(reg)
		ctx, cancel := context.WithTimeout(t.Context(), testenv.Wait(time.Minute))
		out, err := exec.CommandContext(ctx, node, "-e", checkWithPacote, pacote, reg.Start(), "@scope/server@1.0.0", t.TempDir()).CombinedOutput()
		cancel()
		if got := strings.TrimSpace(string(out)); err != nil || got != tc.want {
			t.Errorf("%s: pacote said %q (%v), want %q", tc.name, got, err, tc.want)
		}
	}
}
