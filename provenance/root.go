package provenance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/tuf"
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

// LoadRoot reads a trusted_root.json file, as --trusted-root names one.
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
// the verified metadata in cacheDir (a day before it asks again). mcpsandbox
// does this itself at prepare time, never the sandboxed server. When the
// repository cannot be reached, a cached copy whose TUF metadata has not
// expired is used; with neither, it is an error that says what to do:
// provenance is never passed unverified.
func PublicGood(ctx context.Context, cacheDir string) (*Root, error) {
	return fetchRoot(ctx, cacheDir, PublicGoodTUF)
}

func fetchRoot(ctx context.Context, cacheDir, mirror string) (*Root, error) {
	if cacheDir == "" {
		return nil, errors.New("no cache directory for the Sigstore trusted root")
	}
	opts := func() *tuf.Options {
		return tuf.DefaultOptions().WithContext(ctx).WithCachePath(cacheDir).WithRepositoryBaseURL(mirror)
	}
	tr, err := root.FetchTrustedRootWithOptions(opts().WithCacheValidity(1))
	if err == nil {
		return &Root{material: tr, source: mirror}, nil
	}
	if cached, cerr := root.FetchTrustedRootWithOptions(opts().WithForceCache()); cerr == nil {
		return &Root{material: cached, source: cacheDir + " (cached; " + mirror + " unreachable)"}, nil
	}
	return nil, fmt.Errorf("the Sigstore trusted root could not be fetched from %s (%v) and %s holds no valid copy: "+
		"let mcpsandbox reach that host when it prepares, or give a trusted_root.json with --trusted-root FILE", mirror, err, cacheDir)
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
