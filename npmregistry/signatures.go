package npmregistry

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Key is one of the registry's signing keys (/-/npm/v1/keys).
type Key struct {
	KeyID   string
	Expires time.Time // zero: it does not expire
	Public  *ecdsa.PublicKey
}

// ErrNoKeys is wrapped by Keys when the registry serves no keys (404).
var ErrNoKeys = errors.New("the registry serves no signing keys")

// Signed is what CheckSignatures found when it found nothing wrong.
type Signed int

const (
	// SignedByRegistry: a signature by one of the registry's keys, valid
	// when the version was published, verifies over its integrity.
	SignedByRegistry Signed = iota + 1
	// RegistryServesNoKeys: the registry signs nothing, so nothing was
	// checked. Log it; it is no pass.
	RegistryServesNoKeys
)

func (s Signed) String() string {
	switch s {
	case SignedByRegistry:
		return "signed by the registry"
	case RegistryServesNoKeys:
		return "not signed by this registry (it serves no keys)"
	}
	return "unchecked"
}

// Keys fetches the registry's signing keys; ErrNoKeys when it has none.
func (c *Client) Keys(ctx context.Context) ([]Key, error) {
	u, err := c.endpoint("-/npm/v1/keys")
	if err != nil {
		return nil, err
	}
	var doc struct {
		Keys []struct {
			KeyID   string  `json:"keyid"`
			KeyType string  `json:"keytype"`
			Scheme  string  `json:"scheme"`
			Key     string  `json:"key"`
			Expires *string `json:"expires"`
		} `json:"keys"`
	}
	err = c.getJSON(ctx, u, "application/json", maxSmallDocument, "the registry's signing keys", &doc)
	if errors.Is(err, errNotFound) {
		return nil, fmt.Errorf("%s: %w", c.registryName(), ErrNoKeys)
	}
	if err != nil {
		return nil, err
	}
	var keys []Key
	for _, k := range doc.Keys {
		bad := func(why string) error {
			return fmt.Errorf("%s serves signing key %q, which %s: the registry's keys are broken; nothing it signs can be checked", c.registryName(), k.KeyID, why)
		}
		if k.Scheme != "ecdsa-sha2-nistp256" {
			return nil, bad(fmt.Sprintf("has scheme %q, not ecdsa-sha2-nistp256", k.Scheme))
		}
		der, err := base64.StdEncoding.DecodeString(k.Key)
		if err != nil {
			return nil, bad("is not base64")
		}
		pub, err := x509.ParsePKIXPublicKey(der)
		ec, ok := pub.(*ecdsa.PublicKey)
		if err != nil || !ok {
			return nil, bad("is no ECDSA public key")
		}
		key := Key{KeyID: k.KeyID, Public: ec}
		if k.Expires != nil {
			if key.Expires, err = time.Parse(time.RFC3339Nano, *k.Expires); err != nil {
				return nil, bad(fmt.Sprintf("expires at %q, which is no time", *k.Expires))
			}
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: %w", c.registryName(), ErrNoKeys)
	}
	return keys, nil
}

// CheckSignatures checks v's registry signatures against the keys the
// registry serves now (see Keys and VerifySignatures).
func (c *Client) CheckSignatures(ctx context.Context, v *Version) (Signed, error) {
	keys, err := c.Keys(ctx)
	if errors.Is(err, ErrNoKeys) {
		return RegistryServesNoKeys, nil
	}
	if err != nil {
		return 0, err
	}
	if err := VerifySignatures(v, keys); err != nil {
		return 0, fmt.Errorf("%v (registry %s)", err, c.registryName())
	}
	return SignedByRegistry, nil
}

// VerifySignatures checks v's signatures as npm does: there is at least
// one, and each is by one of keys, over "NAME@VERSION:INTEGRITY", by a key
// that had not expired when v was published (a version with no publish
// time is judged now, where npm would take it as published in 2015).
func VerifySignatures(v *Version, keys []Key) error {
	if len(v.Signatures) == 0 {
		return fmt.Errorf("%s has no registry signature though the registry signs its packages: it did not come through the registry's publish; do not install it", v)
	}
	message := sha256.Sum256([]byte(v.Name + "@" + v.Version + ":" + v.Integrity))
	published := v.Published
	if published.IsZero() {
		published = time.Now()
	}
	for _, s := range v.Signatures {
		i := slices.IndexFunc(keys, func(k Key) bool { return k.KeyID == s.KeyID })
		if i < 0 {
			return fmt.Errorf("%s is signed by key %s, which the registry does not serve: it was not signed by this registry; do not install it", v, s.KeyID)
		}
		k := keys[i]
		if !k.Expires.IsZero() && !published.Before(k.Expires) {
			return fmt.Errorf("%s was published %s, after the registry's key %s expired (%s): its signature vouches for nothing; do not install it", v, published.Format(time.RFC3339), k.KeyID, k.Expires.Format(time.RFC3339))
		}
		sig, err := base64.StdEncoding.DecodeString(s.Sig)
		if err != nil || !ecdsa.VerifyASN1(k.Public, message[:], sig) {
			return fmt.Errorf("the registry signature of %s by key %s does not verify over its integrity %s: the packument or the signature was changed after publishing; do not install it", v, k.KeyID, v.Integrity)
		}
	}
	return nil
}
