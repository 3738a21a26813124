package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRegistry serves one npm package, name at version with the files
// given (beneath package/), on loopback; it returns the registry's URL.
func fakeRegistry(t *testing.T, name, version string, files map[string]string) string {
	t.Helper()
	var tgz bytes.Buffer
	zw := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(zw)
	for path, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + path, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(content))
	}
	tw.Close()
	zw.Close()
	sum := sha512.Sum512(tgz.Bytes())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/"
	packument, err := json.Marshal(map[string]any{
		"name":      name,
		"dist-tags": map[string]string{"latest": version},
		"versions": map[string]any{version: map[string]any{
			"name": name, "version": version,
			"dist": map[string]string{"tarball": url + "package.tgz", "integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:])},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/package.tgz":
			w.Write(tgz.Bytes())
		case strings.EqualFold(strings.ReplaceAll(r.URL.EscapedPath(), "%2F", "/"), "/"+name) || r.URL.Path == "/"+name:
			w.Header().Set("Content-Type", "application/json")
			w.Write(packument)
		default:
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return url
}

// wrap of `npx -y @modelcontextprotocol/server-filesystem /srv/notes`, run
// by root with /srv/notes root's, prepares the server (its sandbox takes
// the grant of the root-owned directory) and wraps the entry. The package
// comes from a registry on loopback: a stand-in of the same name, since
// the real one's dependencies would need the public registry.
func TestWrapWrapsRootsGrantOfItsOwnDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: prepare runs npm")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("no npx on PATH")
	}
	requireConfinement(t)
	if os.Geteuid() != 0 {
		t.Skip("lending root's directories is for mcpsandbox run as root")
	}
	const pkg = "@modelcontextprotocol/server-filesystem"
	registry := fakeRegistry(t, pkg, "0.0.1-test", map[string]string{
		"package.json": `{"name": "` + pkg + `", "version": "0.0.1-test", "bin": {"mcp-server-filesystem": "index.js"}}`,
		"index.js":     "#!/usr/bin/env node\n",
	})
	t.Setenv("npm_config_registry", registry)
	t.Setenv("MCPSANDBOX_STATE_DIR", newStateBase(t).dir)
	notes := rootDir(t, 0o755, "note.txt", "root's note")
	path := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	orig := `{"mcpServers": {"notes": {"command": "npx", "args": ["-y", "` + pkg + `", "` + notes + `"]}}}` + "\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "wrap", "--command", wrapTestCommand, path)
	if code != exitOK || strings.Contains(out, "not wrapped") || !strings.Contains(errOut, "mcpsandbox wrap: prepared notes") {
		t.Fatalf("wrap: exit %d\n%s\n%s", code, out, errOut)
	}
	if e := entriesOf(t, readFile(t, path))["notes"]; e.Command != wrapTestCommand {
		t.Errorf("the entry is not wrapped:\n%s", readFile(t, path))
	}
}
