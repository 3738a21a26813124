package npmregistry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Packument is a package's full document on the registry: every version's
// manifest, the dist-tags and the publish times.
type Packument struct {
	Registry string            // the registry it came from
	Name     string            // the package's name
	DistTags map[string]string // tag → version ("latest" → "1.2.3")

	versions map[string]json.RawMessage
	times    map[string]json.RawMessage
}

// Version is one version of a package: the facts a lock records and the
// checks below need.
type Version struct {
	Name, Version string
	Integrity     string    // dist.integrity: "sha512-<base64>"
	Tarball       string    // dist.tarball: the URL of the tarball
	Published     time.Time // time[version]; zero when the registry gives none
	MCPName       string    // mcpName in its package.json: its entry in the MCP Registry
	Deprecated    string    // npm deprecate's message; "" when it is not
	// Signatures are dist.signatures: the registry's signatures over
	// "NAME@VERSION:INTEGRITY" (see CheckSignatures).
	Signatures []Signature
	// Attestations is dist.attestations; nil when it was published without.
	Attestations *AttestationsRef
}

// Signature is one of dist.signatures.
type Signature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"` // base64 of an ASN.1 ECDSA signature
}

// AttestationsRef is dist.attestations: where the version's attestations
// are and the predicate type of its provenance.
type AttestationsRef struct {
	URL           string
	PredicateType string // "https://slsa.dev/provenance/v1" for npm's provenance
}

// String is "NAME@VERSION".
func (v *Version) String() string { return v.Name + "@" + v.Version }

// fullDocument asks for the full packument, which has the times; npm's
// abbreviated one (application/vnd.npm.install-v1+json) has none.
const fullDocument = "application/json"

// Packument fetches the full packument of name.
func (c *Client) Packument(ctx context.Context, name string) (*Packument, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	u, err := c.endpoint(escapeName(name))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Name     string                     `json:"name"`
		DistTags map[string]string          `json:"dist-tags"`
		Versions map[string]json.RawMessage `json:"versions"`
		Time     map[string]json.RawMessage `json:"time"`
	}
	err = c.getJSON(ctx, u, fullDocument, orDefault(c.MaxPackument, DefaultMaxPackument), "the packument of "+name, &doc)
	if errors.Is(err, errNotFound) {
		return nil, fmt.Errorf("%s has no package %s (404): check the name, or the registry (npm_config_registry)", c.registryName(), name)
	}
	if err != nil {
		return nil, err
	}
	if doc.Name != name {
		return nil, fmt.Errorf("%s answered for %s with the packument of %q: the registry is broken or is not an npm registry", c.registryName(), name, doc.Name)
	}
	if len(doc.Versions) == 0 {
		return nil, fmt.Errorf("%s has no version of %s (all unpublished?): choose another package", c.registryName(), name)
	}
	return &Packument{Registry: c.registryName(), Name: name, DistTags: doc.DistTags, versions: doc.Versions, times: doc.Time}, nil
}

// Version returns the facts of one exact version.
func (p *Packument) Version(version string) (*Version, error) {
	raw, ok := p.versions[version]
	if !ok {
		return nil, fmt.Errorf("%s has no version %s of %s%s", p.Registry, version, p.Name, p.tagsHint())
	}
	var m struct {
		Name       string          `json:"name"`
		Version    string          `json:"version"`
		MCPName    string          `json:"mcpName"`
		Deprecated json.RawMessage `json:"deprecated"`
		Dist       struct {
			Integrity    string      `json:"integrity"`
			Tarball      string      `json:"tarball"`
			Signatures   []Signature `json:"signatures"`
			Attestations *struct {
				URL        string `json:"url"`
				Provenance struct {
					PredicateType string `json:"predicateType"`
				} `json:"provenance"`
			} `json:"attestations"`
		} `json:"dist"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: the manifest of %s@%s does not parse: %v", p.Registry, p.Name, version, err)
	}
	if m.Name != p.Name || m.Version != version {
		return nil, fmt.Errorf("%s: the manifest of %s@%s names %s@%s: the registry's document is inconsistent", p.Registry, p.Name, version, m.Name, m.Version)
	}
	v := &Version{Name: p.Name, Version: version, Integrity: m.Dist.Integrity, Tarball: m.Dist.Tarball, MCPName: m.MCPName, Signatures: m.Dist.Signatures}
	var deprecated string
	if json.Unmarshal(m.Deprecated, &deprecated) == nil {
		v.Deprecated = deprecated
	}
	if a := m.Dist.Attestations; a != nil {
		v.Attestations = &AttestationsRef{URL: a.URL, PredicateType: a.Provenance.PredicateType}
	}
	var published string
	if json.Unmarshal(p.times[version], &published) == nil {
		if t, err := time.Parse(time.RFC3339Nano, published); err == nil {
			v.Published = t.UTC()
		}
	}
	return v, nil
}

// tagsHint names the dist-tags, for an error about a missing version.
func (p *Packument) tagsHint() string {
	if latest, ok := p.DistTags["latest"]; ok {
		return " (latest is " + latest + ")"
	}
	return ""
}

// escapeName is name as a path of the registry: "@scope%2fname".
func escapeName(name string) string {
	if scope, rest, ok := strings.Cut(name, "/"); ok {
		return url.PathEscape(scope) + "%2f" + url.PathEscape(rest)
	}
	return url.PathEscape(name)
}
