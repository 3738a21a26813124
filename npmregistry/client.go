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
}

// New returns a Client of registry, an http or https URL; it checks the
// URL, and asks nothing yet.
func New(registry string) (*Client, error) {
	c := &Client{Registry: registry}
	if _, err := c.baseURL(); err != nil {
		return nil, err
	}
	return c, nil
}

// baseURL is c.Registry, checked, ending in a slash.
func (c *Client) baseURL() (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(c.Registry))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the npm registry %q is no http or https URL: give one such as https://registry.npmjs.org/ (npm_config_registry)", c.Registry)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		u.RawPath = ""
	}
	u.RawQuery, u.Fragment = "", ""
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

// getJSON decodes u's JSON document into v, reading at most limit bytes.
func (c *Client) getJSON(ctx context.Context, u *url.URL, accept string, limit int64, what string, v any) error {
	err := c.get(ctx, u, accept, limit, what, func(body io.Reader) error { return json.NewDecoder(body).Decode(v) })
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%s from %s is no JSON document the registry API describes: %v", what, u.Redacted(), err)
	}
	return err
}

// get fetches u and hands its body, at most limit bytes, to consume, whose
// error it returns as it is. A status other than 200, a body too large and
// a failed read are errors that name the registry and what to do
// (wrapping errNotFound for 404).
func (c *Client) get(ctx context.Context, u *url.URL, accept string, limit int64, what string, consume func(io.Reader) error) error {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := c.fetch(ctx, u, accept, timeout)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", timeout)
		}
		return fmt.Errorf("fetching %s from %s: %v: check that the registry is reachable (npm config get registry; npm_config_registry names another)", what, c.registryName(), err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL
	switch {
	case resp.StatusCode == 404:
		return fmt.Errorf("%s: %s answered 404 for %s: %w", what, c.registryName(), final.Redacted(), errNotFound)
	case resp.StatusCode == 401 || resp.StatusCode == 403:
		return fmt.Errorf("%s: %s refused %s (%d): mcpsandbox sends no npm credentials; use a registry that serves packages without them", what, c.registryName(), final.Redacted(), resp.StatusCode)
	case resp.StatusCode != 200:
		return fmt.Errorf("%s: %s answered %s for %s: try again later, or name another registry (npm_config_registry)", what, c.registryName(), resp.Status, final.Redacted())
	}
	read := &readErr{r: resp.Body}
	body := &io.LimitedReader{R: read, N: limit}
	err = consume(body)
	switch {
	case body.N == 0 && oneMore(read):
		return fmt.Errorf("%s from %s is larger than %s, the most mcpsandbox reads: the registry sent more than any package needs", what, c.registryName(), bytesInWords(limit))
	case read.err != nil && ctx.Err() != nil:
		return fmt.Errorf("%s from %s: not received within %s: try again; the registry or the network is slow", what, c.registryName(), timeout)
	case read.err != nil:
		return fmt.Errorf("%s from %s: reading %s: %v", what, c.registryName(), final.Redacted(), read.err)
	}
	return err
}

// oneMore tells whether r holds another byte: whether a body that filled
// the limit went on.
func oneMore(r io.Reader) bool {
	var one [1]byte
	n, _ := io.ReadFull(r, one[:])
	return n > 0
}

// readErr notes r's error, io.EOF aside, to tell a failed read from
// consume's own error.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// bytesInWords is n as "64 MiB", "512 KiB" or "100 bytes".
func bytesInWords(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
