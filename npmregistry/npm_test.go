package npmregistry_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// pickWithNpm prints, for each spec on stdin's lines, the version npm's own
// npm-pick-manifest picks from the packument at the registry.
const pickWithNpm = `
const [pickPath, registry] = process.argv.slice(1)
const pick = require(pickPath)
;(async () => {
  const out = {}
  for (const spec of require("fs").readFileSync(0, "utf8").trim().split("\n")) {
    const at = spec.lastIndexOf("@")
    const name = at > 0 ? spec.slice(0, at) : spec, want = at > 0 ? spec.slice(at + 1) : "latest"
    const packument = await (await fetch(registry + name.replace("/", "%2f"))).json()
    try { out[spec] = pick(packument, want).version } catch (e) { out[spec] = e.code }
  }
  console.log(JSON.stringify(out))
})()
`

// Every spec of TestResolveAsNpmDoes resolves as npm's own picker has it.
func TestResolveAgreesWithNpm(t *testing.T) {
	pick := testenv.NPMModule(t, "npm-pick-manifest")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH: run scripts/test-setup.sh")
	}
	c := specRegistry(t)
	var specs []string
	for _, tc := range resolveCases {
		specs = append(specs, tc.spec)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Wait(time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "-e", pickWithNpm, pick, c.Registry)
	cmd.Stdin = strings.NewReader(strings.Join(specs, "\n"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var npm map[string]string
	if err := json.Unmarshal(out, &npm); err != nil {
		t.Fatalf("node said %q: %v", out, err)
	}
	for _, spec := range specs {
		v, err := c.Resolve(t.Context(), spec)
		if err != nil || v.Version != npm[spec] {
			t.Errorf("%s: resolved to %v (%v), npm picks %s", spec, v, err, npm[spec])
		}
	}
}
