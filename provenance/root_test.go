package provenance

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without a reachable TUF repository and without a cached root, fetching the
// public-good root is an error that names the way out, never a silent pass.
func TestUnreachableRootNamesTheFix(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler()) // a TUF mirror that serves nothing
	defer srv.Close()
	_, err := fetchRoot(context.Background(), t.TempDir(), srv.URL)
	if err == nil {
		t.Fatal("fetchRoot from a mirror that serves nothing succeeded")
	}
	for _, want := range []string{"the Sigstore trusted root could not be fetched from " + srv.URL, "holds no valid copy", "--trusted-root FILE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A TUF mirror that never answers does not hold a prepare up beyond its
// context (go-tuf's own fetcher would wait for ever).
func TestHangingRootMirrorEndsWithTheContext(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-stop }))
	defer srv.Close()
	defer close(stop)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := fetchRoot(ctx, t.TempDir(), srv.URL)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("fetchRoot = %v, want the context's end", err)
	}
}

// A --trusted-root file that is no trusted root is refused naming the file.
func TestLoadRootRefusesAnotherFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "root.json")
	if err := os.WriteFile(path, []byte(`{"keys":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadRoot(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+": not a Sigstore trusted root (trusted_root.json)") {
		t.Errorf("LoadRoot = %v", err)
	}
}
