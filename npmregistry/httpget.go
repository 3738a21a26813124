package npmregistry

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
)

// A small HTTP/1.1 GET client: the mcpsandbox binary links no net/http
// (see the package doc). One connection per request ("Connection: close").

const (
	maxRedirects  = 5
	maxHeaderLine = 8 << 10
	maxHeader     = 256 << 10 // the status line and all header fields
)

// reply is a response whose body is being read.
type reply struct {
	status int
	reason string
	body   io.Reader
	conn   net.Conn
	stop   func() bool
}

func (r *reply) Close() error {
	r.stop()
	return r.conn.Close()
}

// follow GETs u, following redirects; it returns the reply and its URL.
func (c *Client) follow(ctx context.Context, u *url.URL, accept string) (*reply, *url.URL, error) {
	for range maxRedirects + 1 {
		r, location, err := c.open(ctx, u, accept)
		if err != nil || location == "" {
			return r, u, err
		}
		next, err := u.Parse(location)
		if err != nil {
			return nil, u, fmt.Errorf("%s redirected to %q, which is no URL", u.Redacted(), location)
		}
		if u.Scheme == "https" && next.Scheme != "https" {
			return nil, u, fmt.Errorf("%s redirected to %s, which is not https", u.Redacted(), next.Redacted())
		}
		if next.Host != u.Host {
			next.User = nil // credentials stay with their host
		}
		u = next
	}
	return nil, u, fmt.Errorf("more than %d redirects", maxRedirects)
}

// open sends one GET; a redirect is returned as its Location, closed.
func (c *Client) open(ctx context.Context, u *url.URL, accept string) (*reply, string, error) {
	port := u.Port()
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, "", fmt.Errorf("%s is no http or https URL", u.Redacted())
	case port == "" && u.Scheme == "https":
		port = "443"
	case port == "":
		port = "80"
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil, "", err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (*reply, string, error) {
		stop()
		conn.Close()
		return nil, "", err
	}
	if u.Scheme == "https" {
		tc := tls.Client(conn, &tls.Config{ServerName: u.Hostname(), RootCAs: c.RootCAs, NextProtos: []string{"http/1.1"}})
		if err := tc.HandshakeContext(ctx); err != nil {
			return fail(err)
		}
		conn = tc
	}
	var req strings.Builder
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: mcpsandbox\r\nAccept: %s\r\nAccept-Encoding: gzip\r\nConnection: close\r\n", u.RequestURI(), u.Host, accept)
	if u.User != nil {
		pass, _ := u.User.Password()
		fmt.Fprintf(&req, "Authorization: Basic %s\r\n", base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass)))
	}
	req.WriteString("\r\n")
	if _, err := io.WriteString(conn, req.String()); err != nil {
		return fail(err)
	}
	counted := &headerLimit{r: conn, left: maxHeader}
	br := bufio.NewReaderSize(counted, maxHeaderLine)
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	if err != nil {
		return fail(fmt.Errorf("reading the status line: %v", err))
	}
	proto, rest, _ := strings.Cut(line, " ")
	code, reason, _ := strings.Cut(rest, " ")
	status, err := strconv.Atoi(code)
	if !strings.HasPrefix(proto, "HTTP/1.") || err != nil || status < 200 || status > 599 {
		return fail(fmt.Errorf("%s answered %q, which is no HTTP/1.1 status line", u.Host, line))
	}
	header, err := tp.ReadMIMEHeader()
	if err != nil {
		return fail(fmt.Errorf("reading the header: %v", err))
	}
	counted.left = -1 // the body is bounded by the caller
	if loc := header.Get("Location"); loc != "" && (status == 301 || status == 302 || status == 303 || status == 307 || status == 308) {
		fail(nil)
		return nil, loc, nil
	}
	var body io.Reader = br
	switch {
	case strings.EqualFold(header.Get("Transfer-Encoding"), "chunked"):
		body = &chunkedReader{r: br}
	case header.Get("Transfer-Encoding") != "":
		return fail(fmt.Errorf("unsupported Transfer-Encoding %q", header.Get("Transfer-Encoding")))
	case header.Get("Content-Length") != "":
		n, err := strconv.ParseInt(header.Get("Content-Length"), 10, 64)
		if err != nil || n < 0 {
			return fail(fmt.Errorf("bad Content-Length %q", header.Get("Content-Length")))
		}
		body = &exactReader{r: io.LimitReader(br, n), left: n}
	}
	switch enc := strings.ToLower(header.Get("Content-Encoding")); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return fail(fmt.Errorf("reading the gzip body: %v", err))
		}
		body = zr
	default:
		return fail(fmt.Errorf("unsupported Content-Encoding %q", enc))
	}
	return &reply{status: status, reason: reason, body: body, conn: conn, stop: stop}, "", nil
}

// headerLimit ends a header longer than left bytes (left < 0: no limit).
type headerLimit struct {
	r    io.Reader
	left int64
}

func (h *headerLimit) Read(p []byte) (int, error) {
	if h.left < 0 {
		return h.r.Read(p)
	}
	if h.left == 0 {
		return 0, fmt.Errorf("the header is longer than %d KiB", maxHeader>>10)
	}
	if int64(len(p)) > h.left {
		p = p[:h.left]
	}
	n, err := h.r.Read(p)
	h.left -= int64(n)
	return n, err
}

// exactReader reports a body cut short of its Content-Length.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// chunkedReader decodes a chunked body (RFC 9112 §7.1), trailers skipped.
type chunkedReader struct {
	r       *bufio.Reader
	left    int64 // bytes of the current chunk
	started bool
	done    bool
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	for c.left == 0 {
		if c.done {
			return 0, io.EOF
		}
		if c.started {
			if err := c.crlf(); err != nil {
				return 0, err
			}
		}
		c.started = true
		line, err := c.line()
		if err != nil {
			return 0, err
		}
		size, _, _ := strings.Cut(line, ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad chunk size %q", line)
		}
		if n == 0 {
			c.done = true
			for { // trailers, up to the empty line
				l, err := c.line()
				if err != nil {
					return 0, err
				}
				if l == "" {
					return 0, io.EOF
				}
			}
		}
		c.left = n
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (c *chunkedReader) line() (string, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		if err == io.EOF || err == bufio.ErrBufferFull {
			err = fmt.Errorf("bad chunked body: %v", err)
		}
		return "", err
	}
	return strings.TrimRight(string(line), "\r\n"), nil
}

func (c *chunkedReader) crlf() error {
	l, err := c.line()
	if err == nil && l != "" {
		err = errors.New("bad chunked body: no CRLF after a chunk")
	}
	return err
}
