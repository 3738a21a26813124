package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testregistry"
	"github.com/mcpsandbox/mcpsandbox/npmregistry"
)

// A verifier that does not answer is killed when prepare's bound ends,
// and the version is refused as unverified, not said to fail to verify.
// So is one that cannot be started.
func TestProvenanceVerifierWithNoVerdictRefusesTheVersion(t *testing.T) {
	reg := testregistry.New(t)
	reg.Publish(testregistry.Package{Name: "fixture-hang", Version: "1.0.0", Published: time.Now().Add(-240 * time.Hour)})
	reg.AddAttestation("fixture-hang", "1.0.0", npmregistry.ProvenancePredicate, []byte(`{}`))
	client, err := npmregistry.New(reg.Start())
	if err != nil {
		t.Fatal(err)
	}
	v, err := client.Resolve(context.Background(), "fixture-hang@1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))

	// A verifier that cannot be started gives no verdict either.
	missing := filepath.Join(t.TempDir(), "mcpsandbox-provenance")
	t.Setenv("MCPSANDBOX_PROVENANCE", missing)
	id, err := provenanceOf(context.Background(), client, v, discard)
	want := "fixture-hang@1.0.0: its provenance could not be verified: fork/exec " + missing + ": no such file or directory; refused"
	if id != nil || err == nil || err.Error() != want {
		t.Errorf("a verifier that cannot start: %v, %v; want the version refused:\n%s", id, err, want)
	}

	hang := filepath.Join(t.TempDir(), "mcpsandbox-provenance")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPSANDBOX_PROVENANCE", hang)

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	id, err = provenanceOf(ctx, client, v, discard)
	want = "fixture-hang@1.0.0: its provenance could not be verified: " + hang + " did not answer (context deadline exceeded); refused"
	if id != nil || err == nil || err.Error() != want {
		t.Fatalf("a verifier that hangs: %v, %v; want the version refused:\n%s", id, err, want)
	}
	if strings.Contains(err.Error(), "does not verify") {
		t.Errorf("a verifier that never answered is reported as a verdict: %v", err)
	}
}
