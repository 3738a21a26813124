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

// The family sets of the sandbox's network modes (sandbox.Network's
// SocketFamilies): none, none with the supervisor's resolver, and host.
var (
	unixOnly    = AFUnix
	withQueries = AFUnix | InetQueries
	withInet    = AFUnix | AFInet | AFInet6
)

// variants are the embedded programs.
var variants = []variant{{unixOnly, false}, {withQueries, false}, {withInet, false}, {unixOnly, true}, {withQueries, true}, {withInet, true}}

// TestEmbeddedSeccompIsCurrent: the pre-compiled built-in profile is exactly
// what Compile produces now, and starts use it; with another libseccomp
// version, or a family set that has none, starts compile instead.
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
		fresh, err := Compile("default", v.families, v.logDenials)
		if err != nil {
			t.Fatal(err)
		}
		emb := embedded(v)
		switch {
		case runtime.GOARCH == "amd64" && embLib == lib:
			if !bytes.Equal(emb, fresh) {
				t.Errorf("%+v: the embedded program (%d bytes) differs from Compile's (%d bytes): run `go generate ./sandbox/seccomp` and commit embedded/amd64", v, len(emb), len(fresh))
			}
		case emb != nil:
			t.Errorf("%+v: an embedded program is used with libseccomp %s on %s, generated for %s", v, lib, runtime.GOARCH, embLib)
		}
		used, err := Program("default", v.families, v.logDenials)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(used, fresh) {
			t.Errorf("%+v: a start would load a different program than Compile builds", v)
		}
	}
	// A set no network mode uses yet has no embedded program: it is compiled.
	v4 := variant{AFUnix | AFInet, false}
	if emb := embedded(v4); emb != nil {
		t.Errorf("%s: an embedded program exists for a set TestEmbeddedSeccompIsCurrent does not generate", v4.file())
	}
	used, err := Program("default", v4.families, v4.logDenials)
	if err != nil {
		t.Fatal(err)
	}
	fresh := compileOrFail(t, "default", v4.families, v4.logDenials)
	if !bytes.Equal(used, fresh) {
		t.Errorf("%s: a start would load a different program than Compile builds", v4.file())
	}
	if withV6, err := Program("default", withInet, false); err != nil || bytes.Equal(withV6, used) {
		t.Errorf("unix+inet and unix+inet+inet6 got the same program (err %v)", err)
	}
}

func writeEmbedded(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Fatalf("only amd64 programs are embedded (embedded_other.go's build tag excludes it); this is %s", runtime.GOARCH)
	}
	dir := filepath.FromSlash(embeddedDir)
	for _, v := range variants {
		prog, err := Compile("default", v.families, v.logDenials)
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
