package testnet

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// A test host's web service, the same on every listener: "/" answers
// Greeting(host, scheme), "/ws" is the WebSocket echo, and "/bytes?n=N"
// sends N zero bytes (for throughput).
func (e *Env) handler(host, scheme string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, Greeting(host, scheme)+"\n")
	})
	mux.Handle("/ws", e.WS)
	mux.HandleFunc("/bytes", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
		if err != nil || n < 0 || n > 1<<30 {
			http.Error(w, "n: a byte count up to 1 GiB", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		zero := make([]byte, 64<<10)
		for n > 0 {
			k := min(n, int64(len(zero)))
			if _, err := w.Write(zero[:k]); err != nil {
				return
			}
			n -= k
		}
	})
	return mux
}

// Greeting is what "/" of a test host answers (without the newline), so a
// test can tell which host and scheme a client really reached.
func Greeting(host, scheme string) string {
	return fmt.Sprintf("hello from %s over %s", host, scheme)
}

// serve serves the host's web service on l, over TLS when tlsCfg is set,
// until the test ends.
func (e *Env) serve(l *Listener, scheme string, tlsCfg *tls.Config) {
	e.serveHandler(l, e.handler(l.Host, scheme), tlsCfg)
}

func (e *Env) serveHandler(l *Listener, h http.Handler, tlsCfg *tls.Config) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: discardLog}
	ln := asNetListener{l}
	if tlsCfg != nil {
		go srv.Serve(tls.NewListener(ln, tlsCfg))
	} else {
		go srv.Serve(ln)
	}
	e.t.Cleanup(func() { srv.Close() })
}

// hangUp closes every connection l accepts, until the test ends.
func (e *Env) hangUp(l *Listener) {
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	e.t.Cleanup(func() { l.Close() })
}
