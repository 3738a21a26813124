package egress

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

func TestStubAnswers(t *testing.T) {
	r := newRig(t, rigOptions{allow: []string{"api.example.test", "*.wild.example.test:8443"}, deny: []string{"no.wild.example.test:8443"}})
	cases := []struct {
		name   string
		qtype  uint16
		rcode  int
		answer string // the answer's record data, "" for none
	}{
		{"api.example.test", dns.TypeA, dns.RcodeSuccess, synth(1).String()},
		{"API.Example.Test", dns.TypeA, dns.RcodeSuccess, synth(1).String()},
		{"api.example.test", dns.TypeAAAA, dns.RcodeSuccess, ""},
		{"api.example.test", dns.TypeMX, dns.RcodeSuccess, ""},
		{"x.wild.example.test", dns.TypeA, dns.RcodeSuccess, synth(2).String()},
		{"no.wild.example.test", dns.TypeA, dns.RcodeNameError, ""},
		{"wild.example.test", dns.TypeA, dns.RcodeNameError, ""}, // *.d is below d only
		{"other.example.test", dns.TypeAAAA, dns.RcodeNameError, ""},
		{"198.51.100.7", dns.TypeA, dns.RcodeSuccess, "198.51.100.7"},
		{"localhost", dns.TypeA, dns.RcodeSuccess, "127.0.0.1"},
		{"localhost", dns.TypeAAAA, dns.RcodeSuccess, "::1"},
		{"1.0.77.127.in-addr.arpa", dns.TypePTR, dns.RcodeSuccess, "api.example.test."},
		{"9.9.77.127.in-addr.arpa", dns.TypePTR, dns.RcodeNameError, ""},
	}
	for _, tc := range cases {
		resp := r.query(tc.name, tc.qtype)
		var got string
		if len(resp.Answer) == 1 {
			switch rr := resp.Answer[0].(type) {
			case *dns.A:
				got = rr.A.String()
			case *dns.AAAA:
				got = rr.AAAA.String()
			case *dns.PTR:
				got = rr.Ptr
			}
			if ttl := resp.Answer[0].Header().Ttl; ttl != stubTTL {
				t.Errorf("%s: TTL %d", tc.name, ttl)
			}
		}
		if resp.Rcode != tc.rcode || got != tc.answer || len(resp.Answer) > 1 {
			t.Errorf("%s %s: %s %v, want %s %q", tc.name, dns.TypeToString[tc.qtype], dns.RcodeToString[resp.Rcode], resp.Answer, dns.RcodeToString[tc.rcode], tc.answer)
		}
	}

	// Over TCP too, as resolvers retry a truncated answer.
	m := new(dns.Msg)
	m.SetQuestion("api.example.test.", dns.TypeA)
	resp, _, err := (&dns.Client{Net: "tcp"}).Exchange(m, r.stubTC)
	if err != nil || len(resp.Answer) != 1 || resp.Answer[0].(*dns.A).A.String() != synth(1).String() {
		t.Fatalf("over TCP: %v, %v", resp, err)
	}
}

func TestReverseAddr(t *testing.T) {
	for name, want := range map[string]string{
		"1.0.77.127.in-addr.arpa.": "127.77.0.1",
		"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.": "2001:db8::1",
	} {
		if a, ok := reverseAddr(name); !ok || a != netip.MustParseAddr(want) {
			t.Errorf("reverseAddr(%s) = %v, %v; want %s", name, a, ok, want)
		}
	}
	for _, bad := range []string{"1.2.3.in-addr.arpa.", "x.0.77.127.in-addr.arpa.", "example.test."} {
		if a, ok := reverseAddr(bad); ok {
			t.Errorf("reverseAddr(%s) = %v", bad, a)
		}
	}
}

func TestSyntheticCapacity(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		want   int
	}{
		{"198.18.0.0/15", maxNames},
		{"192.0.2.0/30", 2}, // not the network address, not broadcast
		{"192.0.2.0/31", 0},
		{"2001:db8::/126", 3},
	} {
		if got := capacity(netip.MustParsePrefix(tc.prefix), maxNames); got != tc.want {
			t.Errorf("capacity(%s) = %d, want %d", tc.prefix, got, tc.want)
		}
	}
	n := newNames(netip.MustParsePrefix("192.0.2.0/30"), maxNames)
	a1, _ := n.assign("a.example.test")
	a2, _ := n.assign("b.example.test")
	if _, ok := n.assign("c.example.test"); ok || a1 != netip.MustParseAddr("192.0.2.1") || a2 != netip.MustParseAddr("192.0.2.2") {
		t.Fatalf("a small range gave %v, %v and then more", a1, a2)
	}
}
