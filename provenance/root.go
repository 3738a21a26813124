package provenance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/tuf"
	"github.com/theupdateframework/go-tuf/v2/metadata/fetcher"
)

// Root is the trusted material provenance is verified against: the Fulcio
// CAs, Rekor logs, CT logs and timestamp authorities of a Sigstore instance.
type Root struct {
	material root.TrustedMaterial
	source   string
}

// Source says where the root came from (a file, the TUF repository, its cache).
func (r *Root) Source() string { return r.source }

// ParseRoot reads a trusted_root.json (the format `cosign trusted-root` and
// Sigstore's TUF repository serve).
func ParseRoot(data []byte, source string) (*Root, error) {
	tr, err := root.NewTrustedRootFromJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not a Sigstore trusted root (trusted_root.json): %w", source, err)
	}
	return &Root{material: tr, source: source}, nil
}

// LoadRoot reads a trusted_root.json file, as MCPSANDBOX_SIGSTORE_ROOT names one.
func LoadRoot(path string) (*Root, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trusted root: %w", err)
	}
	return ParseRoot(data, path)
}

// PublicGoodTUF is the TUF repository that serves the Sigstore public-good
// instance's trusted root (npm's provenance is signed there).
const PublicGoodTUF = tuf.DefaultMirror

// PublicGood fetches the public-good trusted root through Sigstore's TUF
// repository, starting from the root.json embedded in sigstore-go and caching
// the verified metadata in cacheDir. mcpsandbox does this itself at prepare
// time, never the sandboxed server. When the repository cannot be reached
// (or serves what does not verify), the cached copy is used while its TUF
// metadata has not expired; with neither, it is an error that says what to
// do: provenance is never passed unverified.
func PublicGood(ctx context.Context, cacheDir string) (*Root, error) {
	return fetchRoot(ctx, cacheDir, PublicGoodTUF, tuf.DefaultRoot())
}

// fetchRoot fetches trusted_root.json from the TUF repository at mirror,
// whose root of trust is tufRoot (a root.json).
func fetchRoot(ctx context.Context, cacheDir, mirror string, tufRoot []byte) (*Root, error) {
	if cacheDir == "" {
		return nil, errors.New("no cache directory for the Sigstore trusted root")
	}
	// go-tuf's fetcher has no deadline and ignores the context: the HTTP
	// client it is given carries both.
	fetch := fetcher.NewDefaultFetcher()
	fetch.SetHTTPUserAgent("mcpsandbox")
	fetch.SetHTTPClient(&http.Client{Timeout: fetchTimeout, Transport: contextTransport{ctx}})
	opts := func() *tuf.Options {
		return tuf.DefaultOptions().WithContext(ctx).WithCachePath(cacheDir).WithRepositoryBaseURL(mirror).WithRoot(tufRoot).WithFetcher(fetch)
	}
	tr, err := root.FetchTrustedRootWithOptions(opts())
	if err == nil {
		return &Root{material: tr, source: mirror}, nil
	}
	if cached, cerr := root.FetchTrustedRootWithOptions(opts().WithForceCache()); cerr == nil {
		return &Root{material: cached, source: cacheDir + " (cached; " + mirror + " failed: " + err.Error() + ")"}, nil
	}
	return nil, fmt.Errorf("the Sigstore trusted root could not be fetched from %s (%v) and %s holds no valid copy: "+
		"let mcpsandbox reach that host when it prepares, or verify against a trusted_root.json of your own with MCPSANDBOX_SIGSTORE_ROOT=FILE", mirror, err, cacheDir)
}

// fetchTimeout bounds each request to the TUF repository.
const fetchTimeout = 30 * time.Second

// contextTransport makes every request of the TUF fetcher end with ctx.
type contextTransport struct{ ctx context.Context }

func (t contextTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return http.DefaultTransport.RoundTrip(req.WithContext(t.ctx))
}

// DefaultCacheDir is where PublicGood caches the trusted root:
// $XDG_CACHE_HOME/mcpsandbox/sigstore (~/.cache/...), /var/cache/mcpsandbox/sigstore for root.
func DefaultCacheDir() (string, error) {
	if os.Geteuid() == 0 {
		return "/var/cache/mcpsandbox/sigstore", nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the Sigstore trusted root: %w", err)
	}
	return filepath.Join(dir, "mcpsandbox", "sigstore"), nil
}

// OpenRoot is the trusted root a command verifies against: file (a
// trusted_root.json, MCPSANDBOX_SIGSTORE_ROOT) when given, else the public-good root through TUF, cached in
// DefaultCacheDir.
func OpenRoot(ctx context.Context, file string) (*Root, error) {
	if file != "" {
		return LoadRoot(file)
	}
	dir, err := DefaultCacheDir()
	if err != nil {
		return nil, err
	}
	return PublicGood(ctx, dir)
}
