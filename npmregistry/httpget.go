package npmregistry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Requests go through net/http, with a Transport of the Client's own: no
// proxy (see the package doc), a bounded header, and timeouts per step
// under the Client's Timeout.

const (
	maxRedirects  = 5
	maxHeader     = 256 << 10 // the status line and all header fields
	dialTimeout   = 15 * time.Second
	tlsTimeout    = 15 * time.Second
	headerTimeout = 30 * time.Second // a registry builds a large packument before it answers
)

// httpClient asks with c's roots, each request on a connection of its own
// (a prepare asks a registry a few times), so nothing outlives a request.
func (c *Client) httpClient(timeout time.Duration) *http.Client {
	// A step's own timeout only when shorter than the whole, whose
	// deadline (get's context) then fires first and names the timeout.
	step := func(d time.Duration) time.Duration {
		if d < timeout {
			return d
		}
		return 0
	}
	dialer := &net.Dialer{Timeout: step(dialTimeout)}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil, // not the environment's: the registry is the one host prepare reaches
			DialContext:            dialer.DialContext,
			TLSClientConfig:        &tls.Config{RootCAs: c.RootCAs, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:    step(tlsTimeout),
			ResponseHeaderTimeout:  step(headerTimeout),
			MaxResponseHeaderBytes: maxHeader,
			DisableKeepAlives:      true,
			// DisableCompression stays false: the transport asks for gzip and unpacks it.
		},
		CheckRedirect: checkRedirect,
		Timeout:       timeout, // a backstop: get's context, made first, has the same bound and names it
	}
}

// checkRedirect follows at most maxRedirects, never from https to http.
// Credentials in the URL stay with their host: net/http carries them only
// to a Location that names no host.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("more than %d redirects", maxRedirects)
	}
	if from := via[len(via)-1].URL; from.Scheme == "https" && req.URL.Scheme != "https" {
		return fmt.Errorf("%s redirected to %s, which is not https", from.Redacted(), req.URL.Redacted())
	}
	return nil
}

// fetch GETs u, following redirects; the response's Request.URL is the
// last URL asked. Its error is net/http's without the url.Error wrapping,
// since callers name the registry and what was asked.
func (c *Client) fetch(ctx context.Context, u *url.URL, accept string, timeout time.Duration) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "mcpsandbox")
	resp, err := c.httpClient(timeout).Do(req)
	if err == nil {
		return resp, nil
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	// net/http exports no error for this; TestEndlessHeaderIsRefused pins the words.
	if strings.Contains(err.Error(), "server response headers exceeded") {
		err = fmt.Errorf("the header is longer than %d KiB", maxHeader>>10)
	}
	return nil, err
}
