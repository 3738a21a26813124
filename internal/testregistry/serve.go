package testregistry

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"time"
)

const (
	keysPath         = "/-/npm/v1/keys"
	attestationsPath = "/-/npm/v1/attestations/"
)

// ServeHTTP answers as the npm registry does: the packument at /NAME (a
// scope's slash escaped or not), tarballs, keys and attestations.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		http.Error(w, `{"error":"method not allowed"}`, http.StatusMethodNotAllowed)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	path := req.URL.Path
	var doc any
	switch {
	case path == keysPath:
		if r.noKeys {
			break
		}
		doc = r.keys()
	case strings.HasPrefix(path, attestationsPath):
		doc = r.attestations(strings.TrimPrefix(path, attestationsPath))
	case strings.Contains(path, "/-/"):
		if data := r.tarballAt(strings.TrimPrefix(path, "/")); data != nil {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(data)
			return
		}
	default:
		doc = r.packument(base(req), strings.TrimPrefix(path, "/"))
	}
	if doc == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"Not found"}`))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(doc)
}

func (r *Registry) keys() any {
	der, err := x509.MarshalPKIXPublicKey(&r.key.PublicKey)
	if err != nil {
		r.t.Error(err)
		return nil
	}
	var expires any
	if !r.keyExpires.IsZero() {
		expires = r.keyExpires.UTC().Format(time.RFC3339Nano)
	}
	return map[string]any{"keys": []any{map[string]any{
		"expires": expires, "keyid": r.keyID, "keytype": "ecdsa-sha2-nistp256", "scheme": "ecdsa-sha2-nistp256",
		"key": base64.StdEncoding.EncodeToString(der),
	}}}
}

func (r *Registry) attestations(spec string) any {
	i := strings.LastIndex(spec, "@")
	if i <= 0 {
		return nil
	}
	pk := r.packages[spec[:i]]
	if pk == nil || pk.versions[spec[i+1:]] == nil || len(pk.versions[spec[i+1:]].attestations) == 0 {
		return nil
	}
	return map[string]any{"attestations": pk.versions[spec[i+1:]].attestations}
}

func (r *Registry) tarballAt(path string) []byte {
	for name, pk := range r.packages {
		for ver, v := range pk.versions {
			if tarballPath(name, ver) == path {
				return v.served
			}
		}
	}
	return nil
}

func (r *Registry) packument(base, name string) any {
	pk := r.packages[name]
	if pk == nil {
		return nil
	}
	versions := map[string]any{}
	times := map[string]string{}
	var created, modified time.Time
	for ver, v := range pk.versions {
		m := maps.Clone(v.manifest)
		dist := map[string]any{"tarball": base + tarballPath(name, ver), "integrity": v.integrity, "shasum": shasum(v.tgz)}
		if len(v.signatures) > 0 {
			dist["signatures"] = v.signatures
		}
		if len(v.attestations) > 0 {
			predicate := v.attestations[0]["predicateType"]
			for _, a := range v.attestations {
				if a["predicateType"] == "https://slsa.dev/provenance/v1" {
					predicate = a["predicateType"]
				}
			}
			dist["attestations"] = map[string]any{"url": base + "-/npm/v1/attestations/" + name + "@" + ver, "provenance": map[string]any{"predicateType": predicate}}
		}
		m["dist"] = dist
		versions[ver] = m
		times[ver] = v.published.Format(time.RFC3339Nano)
		if created.IsZero() || v.published.Before(created) {
			created = v.published
		}
		if v.published.After(modified) {
			modified = v.published
		}
	}
	times["created"], times["modified"] = created.Format(time.RFC3339Nano), modified.Format(time.RFC3339Nano)
	return map[string]any{"_id": name, "name": name, "dist-tags": pk.tags, "versions": versions, "time": times}
}
