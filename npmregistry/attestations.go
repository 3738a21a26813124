package npmregistry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Predicate types of npm's attestations.
const (
	ProvenancePredicate = "https://slsa.dev/provenance/v1"
	PublishPredicate    = "https://github.com/npm/attestation/tree/main/specs/publish/v0.1"
)

// Attestation is one attestation of a version: a Sigstore bundle, raw, for
// the caller to verify.
type Attestation struct {
	PredicateType string
	Bundle        json.RawMessage
}

// Attestations fetches v's attestations (/-/npm/v1/attestations/NAME@VERSION
// on the client's registry); none, with no error, when v was published
// without (v.Attestations nil).
func (c *Client) Attestations(ctx context.Context, v *Version) ([]Attestation, error) {
	if v.Attestations == nil {
		return nil, nil
	}
	u, err := c.endpoint("-/npm/v1/attestations/" + escapeName(v.Name) + "@" + v.Version)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Attestations []struct {
			PredicateType string          `json:"predicateType"`
			Bundle        json.RawMessage `json:"bundle"`
		} `json:"attestations"`
	}
	err = c.getJSON(ctx, u, "application/json", maxSmallDocument, "the attestations of "+v.String(), &doc)
	if errors.Is(err, errNotFound) {
		return nil, fmt.Errorf("%s lists attestations of %s but serves none (404): the registry's document is inconsistent; do not install it", c.registryName(), v)
	}
	if err != nil {
		return nil, err
	}
	var out []Attestation
	for _, a := range doc.Attestations {
		if a.PredicateType == "" || len(a.Bundle) == 0 {
			return nil, fmt.Errorf("%s: an attestation of %s has no predicateType or bundle: the registry's document is broken", c.registryName(), v)
		}
		out = append(out, Attestation{PredicateType: a.PredicateType, Bundle: a.Bundle})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists attestations of %s but its document holds none: do not install it", c.registryName(), v)
	}
	return out, nil
}
