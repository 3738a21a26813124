package provenance

import (
	"encoding/json"
	"fmt"
)

// ProvenanceBundle picks the SLSA provenance bundle out of the registry's
// attestations document (/-/npm/v1/attestations/NAME@VERSION), which also
// holds npm's own publish attestation. ok is false when there is none.
func ProvenanceBundle(doc []byte) (bundle []byte, ok bool, err error) {
	var d struct {
		Attestations []struct {
			PredicateType string          `json:"predicateType"`
			Bundle        json.RawMessage `json:"bundle"`
		} `json:"attestations"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, false, fmt.Errorf("attestations document: %w", err)
	}
	for _, a := range d.Attestations {
		if a.PredicateType == SLSAProvenanceV1 || a.PredicateType == SLSAProvenanceV02 {
			return a.Bundle, true, nil
		}
	}
	return nil, false, nil
}
