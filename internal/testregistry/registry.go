package testregistry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Package is one version to publish.
type Package struct {
	Name, Version string
	// Files are the package's files by path ("package.json", "index.js").
	// Without a package.json, one naming Name and Version is made.
	Files map[string]string
	// Published is the publish time (time[version]); zero is now.
	Published time.Time
	// Tag is the dist-tag set to this version; "" is latest.
	Tag string
	// Deprecated is the version's deprecation message.
	Deprecated string
}

// Registry is an npm registry for tests; its methods may be called while
// it serves.
type Registry struct {
	t  testing.TB
	mu sync.Mutex

	key        *ecdsa.PrivateKey
	keyID      string
	keyExpires time.Time // zero: never
	noKeys     bool
	packages   map[string]*pkg
}

type pkg struct {
	tags     map[string]string
	versions map[string]*version
}

type version struct {
	manifest     map[string]any
	tgz          []byte
	served       []byte // what the tarball URL serves: tgz unless tampered
	integrity    string
	published    time.Time
	signatures   []map[string]string
	attestations []map[string]any
}

// New returns an empty registry with a signing key of its own.
func New(t testing.TB) *Registry {
	r := &Registry{t: t, packages: map[string]*pkg{}}
	r.key, r.keyID = NewKey(t)
	return r
}

// NewKey makes an ECDSA P-256 key and its keyid as npm writes keyids
// ("SHA256:" and the base64 of the SHA-256 of its public key's DER).
func NewKey(t testing.TB) (*ecdsa.PrivateKey, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(der)
	return key, "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// Start serves the registry on 127.0.0.1 until the test ends and returns
// its URL ("http://127.0.0.1:PORT/").
func (r *Registry) Start() string {
	srv := httptest.NewServer(r)
	r.t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// Publish adds a version, signed by the registry's key, and returns its
// integrity ("sha512-…").
func (r *Registry) Publish(p Package) string {
	r.t.Helper()
	files := maps.Clone(p.Files)
	if _, ok := files["package.json"]; !ok {
		data, _ := json.Marshal(map[string]string{"name": p.Name, "version": p.Version})
		files = map[string]string{"package.json": string(data)}
		maps.Copy(files, p.Files)
	}
	var manifest map[string]any
	if err := json.Unmarshal([]byte(files["package.json"]), &manifest); err != nil {
		r.t.Fatalf("testregistry: package.json of %s@%s: %v", p.Name, p.Version, err)
	}
	manifest["name"], manifest["version"] = p.Name, p.Version
	manifest["_id"] = p.Name + "@" + p.Version
	if scripts, ok := manifest["scripts"].(map[string]any); ok {
		for _, s := range []string{"preinstall", "install", "postinstall"} {
			if scripts[s] != nil {
				manifest["hasInstallScript"] = true
			}
		}
	}
	if p.Deprecated != "" {
		manifest["deprecated"] = p.Deprecated
	}
	tgz := tarball(r.t, files)
	sum := sha512.Sum512(tgz)
	v := &version{manifest: manifest, tgz: tgz, served: tgz, integrity: "sha512-" + base64.StdEncoding.EncodeToString(sum[:]), published: p.Published}
	if v.published.IsZero() {
		v.published = time.Now()
	}
	v.published = v.published.UTC()
	r.mu.Lock()
	defer r.mu.Unlock()
	v.signatures = []map[string]string{{"keyid": r.keyID, "sig": sign(r.t, r.key, p.Name, p.Version, v.integrity)}}
	pk := r.packages[p.Name]
	if pk == nil {
		pk = &pkg{tags: map[string]string{}, versions: map[string]*version{}}
		r.packages[p.Name] = pk
	}
	pk.versions[p.Version] = v
	tag := p.Tag
	if tag == "" {
		tag = "latest"
	}
	pk.tags[tag] = p.Version
	return v.integrity
}

// sign is the registry's signature over "NAME@VERSION:INTEGRITY".
func sign(t testing.TB, key *ecdsa.PrivateKey, name, version, integrity string) string {
	sum := sha256.Sum256([]byte(name + "@" + version + ":" + integrity))
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

// tarball is files as npm packs them: under package/, gzipped.
func tarball(t testing.TB, files map[string]string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, path := range slices.Sorted(maps.Keys(files)) {
		text := files[path]
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + path, Mode: 0o644, Size: int64(len(text)), ModTime: time.Unix(0, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// SetTag points a dist-tag at a version.
func (r *Registry) SetTag(name, tag, version string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pkg(name).tags[tag] = version
}

// AddAttestation adds an attestation to a version: its packument then has
// dist.attestations, and /-/npm/v1/attestations/NAME@VERSION serves bundle.
func (r *Registry) AddAttestation(name, version, predicateType string, bundle []byte) {
	if !json.Valid(bundle) {
		r.t.Fatalf("testregistry: the bundle for %s@%s is no JSON", name, version)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.version(name, version)
	v.attestations = append(v.attestations, map[string]any{"predicateType": predicateType, "bundle": json.RawMessage(bundle)})
}

// Key is the registry's signing key and its keyid.
func (r *Registry) Key() (*ecdsa.PrivateKey, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.key, r.keyID
}

// ExpireKey makes the keys document say the key expires at t.
func (r *Registry) ExpireKey(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keyExpires = t
}

// RotateKey serves a new key in place of the one that signed so far.
func (r *Registry) RotateKey() {
	key, id := NewKey(r.t)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.key, r.keyID = key, id
}

// ServeNoKeys makes /-/npm/v1/keys answer 404, as registries that do not
// sign do.
func (r *Registry) ServeNoKeys() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.noKeys = true
}

// TamperTarball serves other bytes for a version's tarball than those its
// integrity and signature were made over.
func (r *Registry) TamperTarball(name, version string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.version(name, version)
	files := map[string]string{"package.json": `{"name":"` + name + `","version":"` + version + `"}`, "index.js": "// tampered\n"}
	v.served = tarball(r.t, files)
}

// ForgeSignature replaces a version's signature by one made with another
// key under the registry's keyid.
func (r *Registry) ForgeSignature(name, version string) {
	other, _ := NewKey(r.t)
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.version(name, version)
	v.signatures = []map[string]string{{"keyid": r.keyID, "sig": sign(r.t, other, name, version, v.integrity)}}
}

// Unsign removes a version's signatures.
func (r *Registry) Unsign(name, version string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.version(name, version).signatures = nil
}

func (r *Registry) pkg(name string) *pkg {
	pk := r.packages[name]
	if pk == nil {
		r.t.Fatalf("testregistry: no package %s published", name)
	}
	return pk
}

func (r *Registry) version(name, ver string) *version {
	v := r.pkg(name).versions[ver]
	if v == nil {
		r.t.Fatalf("testregistry: no version %s@%s published", name, ver)
	}
	return v
}

// shasum is the sha1 hex npm still lists beside the integrity.
func shasum(data []byte) string {
	sum := sha1.Sum(data)
	return hex.EncodeToString(sum[:])
}

// base is the registry's URL as the request reached it.
func base(req *http.Request) string {
	return "http://" + req.Host + "/"
}

// tarballPath is where a version's tarball is: /NAME/-/BASENAME-VERSION.tgz.
func tarballPath(name, version string) string {
	basename := name[strings.LastIndex(name, "/")+1:]
	return name + "/-/" + basename + "-" + version + ".tgz"
}
