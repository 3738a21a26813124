package npmregistry

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// Defaults for a Client's zero fields.
const (
	DefaultTimeout      = 60 * time.Second
	DefaultMaxPackument = 64 << 20  // the full packument of a package with thousands of versions
	DefaultMaxTarball   = 256 << 20 // larger than any package npm accepts for publishing
	maxSmallDocument    = 4 << 20   // keys and attestations
)

// Client asks one registry. Its zero fields take the defaults above.
type Client struct {
	// Registry is the registry's base URL as npm is configured with it
	// (`npm config get registry`), such as https://registry.npmjs.org/.
	Registry string
	// Timeout bounds each request, connecting to the last byte.
	Timeout time.Duration
	// MaxPackument and MaxTarball bound what a response may hold.
	MaxPackument, MaxTarball int64
	// RootCAs verifies an https registry; nil is the host's roots.
	RootCAs *x509.CertPool

	base *url.URL
}

// New returns a Client of the registry at base, an http or https URL.
func New(registry string) (*Client, error) {
	c := &Client{Registry: registry}
	if _, err := c.baseURL(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Client) baseURL() (*url.URL, error) {
	if c.base != nil {
		return c.base, nil
	}
	u, err := url.Parse(strings.TrimSpace(c.Registry))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the npm registry %q is no http or https URL: give one such as https://registry.npmjs.org/ (npm_config_registry)", c.Registry)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		u.RawPath = ""
	}
	u.RawQuery, u.Fragment = "", ""
	c.base = u
	return u, nil
}

// endpoint is the registry's URL of path (already escaped).
func (c *Client) endpoint(escapedPath string) (*url.URL, error) {
	base, err := c.baseURL()
	if err != nil {
		return nil, err
	}
	return base.Parse(escapedPath)
}

// registryName is how errors name the registry.
func (c *Client) registryName() string {
	if base, err := c.baseURL(); err == nil {
		return base.Redacted()
	}
	return c.Registry
}

func orDefault(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

// errNotFound is a 404, which some callers expect.
var errNotFound = errors.New("not found")

// getJSON fetches u into v, reading at most limit bytes.
func (c *Client) getJSON(ctx context.Context, u *url.URL, accept string, limit int64, what string, v any) error {
	var body strings.Builder
	if err := c.get(ctx, u, accept, limit, what, &body); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(body.String()), v); err != nil {
		return fmt.Errorf("%s from %s is no JSON document the registry API describes: %v", what, u.Redacted(), err)
	}
	return nil
}

// get fetches u into w, at most limit bytes; a status other than 200 is an
// error that names the registry and what to do (errNotFound wrapped for 404).
func (c *Client) get(ctx context.Context, u *url.URL, accept string, limit int64, what string, w io.Writer) error {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, final, err := c.follow(ctx, u, accept)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", timeout)
		}
		return fmt.Errorf("fetching %s from %s: %v: check that the registry is reachable (npm config get registry; npm_config_registry names another)", what, c.registryName(), err)
	}
	defer resp.Close()
	switch {
	case resp.status == 404:
		return fmt.Errorf("%s: %s answered 404 for %s: %w", what, c.registryName(), final.Redacted(), errNotFound)
	case resp.status == 401 || resp.status == 403:
		return fmt.Errorf("%s: %s refused %s (%d): mcpsandbox sends no npm credentials; use a registry that serves packages without them", what, c.registryName(), final.Redacted(), resp.status)
	case resp.status != 200:
		return fmt.Errorf("%s: %s answered %d %s for %s: try again later, or name another registry (npm_config_registry)", what, c.registryName(), resp.status, resp.reason, final.Redacted())
	}
	n, err := io.Copy(w, io.LimitReader(resp.body, limit+1))
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("%s from %s: not received within %s: try again, or raise the timeout", what, c.registryName(), timeout)
	case err != nil:
		return fmt.Errorf("%s from %s: reading %s: %v", what, c.registryName(), final.Redacted(), err)
	case n > limit:
		return fmt.Errorf("%s from %s is larger than %d MiB, the most mcpsandbox reads: the registry sent more than any package needs", what, c.registryName(), limit>>20)
	}
	return nil
}
