package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testnet/netclient"
)

// The benchmark tools: measured in this process, so a confined run and an
// unconfined one of the same binary compare the path alone.

// hostPort is u's host and port (the scheme's default when none).
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

func measure(ctx context.Context, a netclient.MeasureArgs) (netclient.Measurement, error) {
	var m netclient.Measurement
	u, err := url.Parse(a.URL)
	if err != nil {
		return m, err
	}
	// Resolved once: the connects time the path, not the resolver.
	addrs, err := net.DefaultResolver.LookupHost(ctx, u.Hostname())
	if err != nil {
		return m, err
	}
	_, port, _ := net.SplitHostPort(hostPort(u))
	target := net.JoinHostPort(addrs[0], port)
	var d net.Dialer
	for range a.Connects {
		start := time.Now()
		c, err := d.DialContext(ctx, "tcp", target)
		if err != nil {
			return m, fmt.Errorf("connect %d to %s: %w", len(m.ConnectNS), target, err)
		}
		m.ConnectNS = append(m.ConnectNS, time.Since(start).Nanoseconds())
		c.Close()
	}
	sort.Slice(m.ConnectNS, func(i, j int) bool { return m.ConnectNS[i] < m.ConnectNS[j] })
	if a.Bytes > 0 {
		get := *u
		get.Path, get.RawQuery = "/bytes", fmt.Sprintf("n=%d", a.Bytes)
		client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}}
		start := time.Now()
		res, err := client.Get(get.String())
		if err != nil {
			return m, err
		}
		defer res.Body.Close()
		n, err := io.Copy(io.Discard, res.Body)
		m.BulkNS, m.BulkBytes = time.Since(start).Nanoseconds(), n
		if err != nil {
			return m, err
		}
	}
	return m, nil
}

// held are the idle connections hold opened, until release.
var held struct {
	sync.Mutex
	conns []net.Conn
}

func hold(ctx context.Context, a netclient.HoldArgs) (int, error) {
	u, err := url.Parse(a.URL)
	if err != nil {
		return 0, err
	}
	var d net.Dialer
	held.Lock()
	defer held.Unlock()
	for range a.Count {
		c, err := d.DialContext(ctx, "tcp", hostPort(u))
		if err != nil {
			return len(held.conns), err
		}
		held.conns = append(held.conns, c)
	}
	return len(held.conns), nil
}

func release() int {
	held.Lock()
	defer held.Unlock()
	n := len(held.conns)
	for _, c := range held.conns {
		c.Close()
	}
	held.conns = nil
	return n
}
