package npmregistry

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"hash"
	"io"
	"strings"
)

// Integrity is data's sha512 integrity as npm writes it: "sha512-<base64>".
func Integrity(data []byte) string {
	sum := sha512.Sum512(data)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// sriAlgorithms are the hashes checked, strongest first; an integrity with
// only a weaker one (sha1, from npm's early years) is refused.
var sriAlgorithms = []struct {
	name string
	new  func() hash.Hash
}{{"sha512", sha512.New}, {"sha384", sha512.New384}, {"sha256", sha256.New}}

// CheckIntegrity reads r to its end and checks it against integrity, a
// Subresource Integrity string ("sha512-<base64>", several separated by
// spaces): the strongest algorithm it names must match.
func CheckIntegrity(r io.Reader, integrity string) error {
	var alg string
	var h hash.Hash
	var want [][]byte
	for _, a := range sriAlgorithms {
		for _, entry := range strings.Fields(integrity) {
			digest, ok := strings.CutPrefix(entry, a.name+"-")
			if !ok {
				continue
			}
			digest, _, _ = strings.Cut(digest, "?")
			if sum, err := base64.StdEncoding.DecodeString(digest); err == nil {
				want = append(want, sum)
			}
		}
		if len(want) > 0 {
			alg, h = a.name, a.new()
			break
		}
	}
	if h == nil {
		return fmt.Errorf("the integrity %q names no sha512, sha384 or sha256 digest: it cannot be checked", integrity)
	}
	if _, err := io.Copy(h, r); err != nil {
		return fmt.Errorf("reading the tarball to check its integrity: %v", err)
	}
	got := h.Sum(nil)
	for _, w := range want {
		if subtle.ConstantTimeCompare(got, w) == 1 {
			return nil
		}
	}
	return fmt.Errorf("the tarball's %s is %s-%s, not the published %s: it is not the package the registry published", alg, alg, base64.StdEncoding.EncodeToString(got), integrity)
}

// Tarball downloads v's tarball into w (at most MaxTarball bytes) and
// checks it against v.Integrity; on an error, discard what w received.
func (c *Client) Tarball(ctx context.Context, v *Version, w io.Writer) error {
	if v.Integrity == "" {
		return fmt.Errorf("%s on %s has no dist.integrity: it cannot be checked, so it is not taken", v, c.registryName())
	}
	base, err := c.baseURL()
	if err != nil {
		return err
	}
	u, err := base.Parse(v.Tarball)
	switch {
	case err != nil || v.Tarball == "":
		return fmt.Errorf("%s: the tarball URL %q is no URL: the registry's document is broken", v, v.Tarball)
	case u.Host != base.Host || (base.Scheme == "https" && u.Scheme != "https"):
		return fmt.Errorf("the tarball of %s is at %s, not on the registry %s, the one host prepare reaches: ask the registry's operator, or name the registry the tarballs are on (npm_config_registry)", v, u.Redacted(), c.registryName())
	}
	u.User = base.User
	return c.get(ctx, u, "application/octet-stream", orDefault(c.MaxTarball, DefaultMaxTarball), "the tarball of "+v.String(), func(body io.Reader) error {
		if err := CheckIntegrity(io.TeeReader(body, w), v.Integrity); err != nil {
			return fmt.Errorf("%s from %s: %v", v, c.registryName(), err)
		}
		return nil
	})
}
