package policy

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// schemePorts are the ports of URLs that name none, by scheme.
var schemePorts = map[string]uint16{
	"http": 80, "https": 443, "ws": 80, "wss": 443,
	"postgres": 5432, "postgresql": 5432, "mysql": 3306, "mariadb": 3306,
	"redis": 6379, "rediss": 6379, "mongodb": 27017, "amqp": 5672, "amqps": 5671,
	"nats": 4222, "clickhouse": 9000,
}

// URLHosts are the host specs (HOST:PORT) a URL argument names: every
// host of its authority (postgresql://a,b:5433/db names two), with the
// URL's port or its scheme's. "localhost" is given as the loopback
// addresses, which a name can never reach past the SSRF floor. ok is
// false for an argument that is no URL; a URL without a network host (a
// unix socket's, file:///x) yields none.
func URLHosts(arg string) (specs []string, ok bool, err error) {
	scheme, rest, found := strings.Cut(arg, "://")
	if !found || !validScheme(scheme) {
		return nil, false, nil
	}
	scheme = strings.ToLower(scheme)
	authority := rest
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		authority = rest[:end]
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:] // user:password@
	}
	for _, hp := range strings.Split(authority, ",") {
		if hp == "" {
			continue
		}
		host, port, err := urlHostPort(hp)
		if err != nil {
			return nil, true, fmt.Errorf("the URL %s: %v", redactURL(arg), err)
		}
		if h, err := url.PathUnescape(host); err == nil && strings.HasPrefix(h, "/") {
			continue // libpq's percent-encoded socket directory
		}
		if port == "" {
			p, known := schemePorts[scheme]
			if !known {
				return nil, true, fmt.Errorf("the URL %s names no port, and %s:// has none known: write its port", redactURL(arg), scheme)
			}
			port = strconv.Itoa(int(p))
		}
		var out []string
		switch a, err := netip.ParseAddr(host); {
		case strings.EqualFold(strings.TrimSuffix(host, "."), "localhost"):
			out = []string{"127.0.0.1:" + port, "[::1]:" + port}
		case err == nil && a.Is6():
			out = []string{"[" + host + "]:" + port}
		default:
			out = []string{host + ":" + port}
		}
		for _, s := range out {
			if _, err := ParseHostSpec(s); err != nil {
				return nil, true, fmt.Errorf("the URL %s: %v", redactURL(arg), err)
			}
		}
		specs = append(specs, out...)
	}
	return specs, true, nil
}

func validScheme(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// urlHostPort splits an authority's host[:port] or [v6][:port].
func urlHostPort(hp string) (host, port string, err error) {
	if strings.HasPrefix(hp, "[") {
		end := strings.IndexByte(hp, ']')
		if end < 0 {
			return "", "", fmt.Errorf("%q has [ without ]", hp)
		}
		host, rest := hp[1:end], hp[end+1:]
		if rest != "" && !strings.HasPrefix(rest, ":") {
			return "", "", fmt.Errorf("%q has %q after ]", hp, rest)
		}
		return host, strings.TrimPrefix(rest, ":"), nil
	}
	host, port, _ = strings.Cut(hp, ":")
	return host, port, nil
}

// redactURL leaves a URL's password out of messages.
func redactURL(arg string) string {
	scheme, rest, _ := strings.Cut(arg, "://")
	end := len(rest)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		end = i
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return arg
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return arg
	}
	return scheme + "://" + user + ":***" + rest[at:]
}
