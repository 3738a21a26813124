package provenance_test

import (
	"encoding/base64"
	"testing"
)

func decodePayload(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func encodePayload(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
