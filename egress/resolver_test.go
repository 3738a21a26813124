package egress

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func TestParseResolver(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.53":        "127.0.0.53:53",
		"127.0.0.1:5353":    "127.0.0.1:5353",
		"::1":               "[::1]:53",
		"[::1]":             "[::1]:53",
		"[2001:db8::1]:853": "[2001:db8::1]:853",
	} {
		if got, err := parseResolver(in); err != nil || got != want {
			t.Errorf("parseResolver(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"dns.example.test", "127.0.0.1:", "127.0.0.1:0", ""} {
		if _, err := parseResolver(bad); err == nil || !strings.Contains(err.Error(), "ADDR[:PORT]") {
			t.Errorf("parseResolver(%q): %v, want an error showing ADDR[:PORT]", bad, err)
		}
	}
}

func TestResolvConf(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("search example.test\n"), 0o644)
	if _, err := New(Options{ResolvConf: empty}); err == nil || !strings.Contains(err.Error(), "names no nameserver: give --resolver") {
		t.Errorf("New with a resolv.conf without nameservers: %v", err)
	}
	if _, err := New(Options{ResolvConf: filepath.Join(dir, "missing")}); err == nil || !strings.Contains(err.Error(), "give --resolver") {
		t.Errorf("New with no resolv.conf: %v", err)
	}
	conf := filepath.Join(dir, "resolv.conf")
	os.WriteFile(conf, []byte("nameserver 127.0.0.53\noptions edns0 trust-ad\n"), 0o644)
	r, err := newResolver("", conf)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := r.nameservers(); !slices.Equal(s, []string{"127.0.0.53:53"}) {
		t.Errorf("servers %v: want the systemd-resolved stub", s)
	}
	os.WriteFile(conf, []byte("nameserver 127.0.0.1\nnameserver ::1\n"), 0o644)
	if s, _ := r.nameservers(); !slices.Equal(s, []string{"127.0.0.1:53", "[::1]:53"}) {
		t.Errorf("servers after resolv.conf changed: %v", s)
	}
}

func TestResolverFollowsCNAMEAndCaches(t *testing.T) {
	h := startHostDNS(t, 60)
	h.set("api.example.test", "203.0.113.10", "2001:db8::10")
	r, err := newResolver(h.addr, "")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		addrs, err := r.lookup(context.Background(), "api.example.test")
		if err != nil || !slices.Equal(addrs, []netip.Addr{netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("2001:db8::10")}) {
			t.Fatalf("lookup: %v, %v", addrs, err)
		}
	}
	if n := h.queries("api.example.test"); n != 1 {
		t.Fatalf("asked %d times within the TTL", n)
	}
	if _, err := r.lookup(context.Background(), "nothing.example.test"); !errors.Is(err, errNoName) {
		t.Fatalf("an unknown name: %v", err)
	}

	resp := new(dns.Msg)
	resp.SetQuestion("www.example.test.", dns.TypeA)
	hdr := func(name string, t uint16, ttl uint32) dns.RR_Header {
		return dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: ttl}
	}
	resp.Answer = []dns.RR{
		&dns.A{Hdr: hdr("edge.example.test.", dns.TypeA, 30), A: netip.MustParseAddr("198.51.100.2").AsSlice()},
		&dns.CNAME{Hdr: hdr("www.example.test.", dns.TypeCNAME, 300), Target: "cdn.example.test."},
		&dns.CNAME{Hdr: hdr("cdn.example.test.", dns.TypeCNAME, 300), Target: "edge.example.test."},
		&dns.A{Hdr: hdr("stray.example.test.", dns.TypeA, 30), A: netip.MustParseAddr("127.0.0.1").AsSlice()},
	}
	addrs, ttl := addressesOf(resp, "www.example.test", dns.TypeA)
	if !slices.Equal(addrs, []netip.Addr{netip.MustParseAddr("198.51.100.2")}) || ttl != 30 {
		t.Fatalf("through the CNAME chain: %v ttl %d; want 198.51.100.2 only (not the stray record)", addrs, ttl)
	}
}
