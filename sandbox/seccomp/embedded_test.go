package seccomp

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

var updateSeccomp = flag.Bool("update-seccomp", false, "rewrite embedded/<arch>/ from Compile (go generate ./sandbox/seccomp)")

var variants = []variant{{false, false}, {true, false}, {false, true}, {true, true}}

// TestEmbeddedSeccompIsCurrent: the pre-compiled built-in profile is exactly
// what Compile produces now, and starts use it; with another libseccomp
// version starts compile instead.
func TestEmbeddedSeccompIsCurrent(t *testing.T) {
	if *updateSeccomp {
		writeEmbedded(t)
		return
	}
	lib, embLib := libVersion(), embeddedLibVersion()
	if runtime.GOARCH == "amd64" && embLib != lib {
		t.Logf("embedded/amd64 was generated with libseccomp %s, this is %s: checking the fallback only", embLib, lib)
	}
	for _, v := range variants {
		fresh, err := Compile("default", v.netHost, v.logDenials)
		if err != nil {
			t.Fatal(err)
		}
		emb := embedded(v.netHost, v.logDenials)
		switch {
		case runtime.GOARCH == "amd64" && embLib == lib:
			if !bytes.Equal(emb, fresh) {
				t.Errorf("%+v: the embedded program (%d bytes) differs from Compile's (%d bytes): run `go generate ./sandbox/seccomp` and commit embedded/amd64", v, len(emb), len(fresh))
			}
		case emb != nil:
			t.Errorf("%+v: an embedded program is used with libseccomp %s on %s, generated for %s", v, lib, runtime.GOARCH, embLib)
		}
		used, err := Program("default", v.netHost, v.logDenials)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(used, fresh) {
			t.Errorf("%+v: a start would load a different program than Compile builds", v)
		}
	}
}

func writeEmbedded(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Fatalf("only amd64 programs are embedded (embedded_other.go's build tag excludes it); this is %s", runtime.GOARCH)
	}
	dir := filepath.FromSlash(embeddedDir)
	for _, v := range variants {
		prog, err := Compile("default", v.netHost, v.logDenials)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, v.file()), prog, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, embeddedVersionFile), []byte(libVersion()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
