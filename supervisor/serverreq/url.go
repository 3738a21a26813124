package serverreq

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// urlHosts decides which URLs a URL-mode elicitation may send the user
// to: those whose host (and port) the server's egress allowlist names and
// its deny list does not. A server confined offline (--net none) reaches
// no host, so it may send the user to none either.
type urlHosts struct {
	rules   policy.HostRules
	offline bool
}

// check says why u may not be shown ("" when it may).
func (h urlHosts) check(u string, setting func(string) string) string {
	if h.offline {
		return fmt.Sprintf("the server runs with %s none, so it may send the user to no URL", setting("Net"))
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || (p.Scheme != "https" && p.Scheme != "http") {
		return "its url is no http or https URL with a host"
	}
	host := strings.ToLower(p.Hostname())
	port := uint16(443)
	if p.Scheme == "http" {
		port = 80
	}
	if s := p.Port(); s != "" {
		n, err := strconv.ParseUint(s, 10, 16)
		if err != nil {
			return "its url has no valid port"
		}
		port = uint16(n)
	}
	var ok bool
	if a, err := netip.ParseAddr(host); err == nil {
		ok, _ = h.rules.DecideAddr(a, port)
	} else {
		ok, _ = h.rules.DecideName(host, port)
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("its url's host %s is not on the server's %s list (add --allow-host %s to let it)", strconv.Quote(net.JoinHostPort(host, strconv.Itoa(int(port)))), setting("AllowHosts"), strconv.Quote(host))
}
