package npmregistry_test

import (
	"bufio"
	"compress/gzip"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/npmregistry"
)

// onePackument is a packument of pkg with one version.
const onePackument = `{"name":"pkg","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"pkg","version":"1.0.0","dist":{"integrity":"sha512-x","tarball":"http://x/pkg/-/pkg-1.0.0.tgz"}}},"time":{"1.0.0":"2026-01-02T03:04:05.000Z","unpublished":{"time":"x"}}}`

// serve serves handler on 127.0.0.1 and returns a Client of it.
func serve(t *testing.T, handler http.HandlerFunc) *npmregistry.Client {
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	c, err := npmregistry.New(srv.URL + "/prefix")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The registry's answers as real registries send them are read: gzip over
// chunked transfer, 103 Early Hints (as CDNs send) before the answer, a
// registry under a path, redirects, and https.
func TestRegistryAnswers(t *testing.T) {
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/prefix/old":
			http.Redirect(w, r, "/prefix/pkg", http.StatusMovedPermanently)
		case "/prefix/pkg":
			if r.Header.Get("Accept") != "application/json" {
				t.Errorf("asked with Accept %q: the full packument, with times, is application/json", r.Header.Get("Accept"))
			}
			w.Header().Set("Link", "</prefix/pkg/-/pkg-1.0.0.tgz>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			for _, part := range strings.SplitAfter(onePackument, ",") {
				zw.Write([]byte(part))
				zw.Flush()
				w.(http.Flusher).Flush() // chunked
			}
			zw.Close()
		default:
			http.NotFound(w, r)
		}
	})
	p, err := c.Packument(t.Context(), "pkg")
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Resolve("")
	if err != nil || !v.Published.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("latest: %+v, %v", v, err)
	}
	if _, err := c.Packument(t.Context(), "old"); err == nil || !strings.Contains(err.Error(), `with the packument of "pkg"`) {
		t.Errorf("a redirect to another package's packument: %v", err)
	}

	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down/pkg" {
			http.Redirect(w, r, "http://"+r.Host+"/pkg", http.StatusFound)
			return
		}
		fmt.Fprint(w, onePackument)
	}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted client's handshake
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(tlsSrv.Certificate())
	c = &npmregistry.Client{Registry: tlsSrv.URL, RootCAs: roots}
	if _, err := c.Packument(t.Context(), "pkg"); err != nil {
		t.Errorf("over https: %v", err)
	}
	c = &npmregistry.Client{Registry: tlsSrv.URL + "/down", RootCAs: roots}
	if _, err := c.Packument(t.Context(), "pkg"); err == nil || !strings.Contains(err.Error(), "which is not https") {
		t.Errorf("a redirect from https to http: %v", err)
	}
	c = &npmregistry.Client{Registry: tlsSrv.URL}
	if _, err := c.Packument(t.Context(), "pkg"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("an https registry whose certificate is not trusted: %v", err)
	}
}

// What goes wrong between mcpsandbox and the registry is named, with the
// registry and what to do.
func TestRegistryFailures(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/prefix/broken":
			http.Error(w, "oops", http.StatusInternalServerError)
		case "/prefix/private":
			http.Error(w, "auth", http.StatusUnauthorized)
		case "/prefix/html":
			fmt.Fprint(w, "<html>")
		case "/prefix/huge":
			fmt.Fprintf(w, `{"name":"huge","pad":%q}`, strings.Repeat("x", 4<<10))
		case "/prefix/loop":
			http.Redirect(w, r, r.URL.Path, http.StatusFound)
		case "/prefix/slow":
			select {
			case <-r.Context().Done():
			case <-block:
			}
		default:
			http.NotFound(w, r)
		}
	})
	c.MaxPackument = 2 << 10
	c.Timeout = 200 * time.Millisecond
	reg := c.Registry + "/"
	for name, want := range map[string]string{
		"broken":  "the packument of broken: " + reg + " answered 500 Internal Server Error for " + reg + "broken: try again later, or name another registry (npm_config_registry)",
		"private": "refused " + reg + "private (401): mcpsandbox sends no npm credentials",
		"html":    "the packument of html from " + reg + "html is no JSON document the registry API describes",
		"huge":    "the packument of huge from " + reg + " is larger than 2 KiB, the most mcpsandbox reads",
		"loop":    "fetching the packument of loop from " + reg + ": more than 5 redirects: check that the registry is reachable",
		"slow":    "fetching the packument of slow from " + reg + ": no answer within 200ms: check that the registry is reachable",
	} {
		if _, err := c.Packument(t.Context(), name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant one containing %q", name, err, want)
		}
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	l.Close()
	c = &npmregistry.Client{Registry: closed}
	if _, err := c.Packument(t.Context(), "pkg"); err == nil || !strings.Contains(err.Error(), "fetching the packument of pkg from "+closed+": dial tcp") {
		t.Errorf("a registry nobody listens at: %v", err)
	}
	if _, err := npmregistry.New("registry.npmjs.org"); err == nil || !strings.Contains(err.Error(), `the npm registry "registry.npmjs.org" is no http or https URL: give one such as https://registry.npmjs.org/`) {
		t.Errorf("a registry that is no URL: %v", err)
	}
}

// A registry that sends an endless header is cut off, not buffered.
func TestEndlessHeaderIsRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		// Answer after the request, as a server does: net/http drops bytes
		// that come before it as unsolicited.
		if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
			return
		}
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nX-Endless: ")
		line := strings.Repeat("a", 64<<10)
		for range 64 { // 4 MiB, or until the client hangs up
			if _, err := io.WriteString(conn, line); err != nil {
				return
			}
		}
	}()
	c := &npmregistry.Client{Registry: "http://" + l.Addr().String()}
	if _, err := c.Packument(t.Context(), "pkg"); err == nil || !strings.Contains(err.Error(), "the header is longer than 256 KiB") {
		t.Errorf("an endless header: %v", err)
	}
}

// A tarball elsewhere than on the registry is not fetched: prepare reaches
// the registry alone.
func TestTarballElsewhereIsRefused(t *testing.T) {
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, strings.Replace(onePackument, "http://x/", "http://203.0.113.1/", 1))
	})
	v, err := c.Resolve(t.Context(), "pkg")
	if err != nil {
		t.Fatal(err)
	}
	want := "the tarball of pkg@1.0.0 is at http://203.0.113.1/pkg/-/pkg-1.0.0.tgz, not on the registry " + c.Registry + "/, the one host prepare reaches"
	if err := c.Tarball(t.Context(), v, io.Discard); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a tarball on another host: %v\nwant %q", err, want)
	}
}
