// Command nfpm builds the .deb and .rpm of mcpsandbox from
// packaging/nfpm.yaml with goreleaser's nfpm library, which writes both
// formats itself (no dpkg-deb or rpmbuild). It is a program of its own so
// that nothing of nfpm is linked into mcpsandbox. Run from the module's
// root, as scripts/package.sh does.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb"
	_ "github.com/goreleaser/nfpm/v2/rpm"
)

func main() {
	config := flag.String("config", "packaging/nfpm.yaml", "the package's description")
	out := flag.String("out", "dist", "where to write the packages")
	version := flag.String("version", "", "the packages' version (required)")
	arch := flag.String("arch", "amd64", "the architecture, in Go's names")
	binary := flag.String("binary", "mcpsandbox", "the mcpsandbox binary to package")
	provenance := flag.String("provenance", "mcpsandbox-provenance", "the mcpsandbox-provenance binary to package")
	manDir := flag.String("man", "", "the directory of gzipped man pages (required)")
	flag.Parse()
	if *version == "" || *manDir == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: nfpm -version V -man DIR [flags] deb|rpm...")
		os.Exit(2)
	}
	env := map[string]string{"VERSION": *version, "ARCH": *arch, "BINARY": *binary, "PROVENANCE": *provenance, "MANDIR": *manDir,
		"DOCDIR": os.Getenv("DOCDIR"), "GLIBC": os.Getenv("GLIBC")}
	for _, format := range flag.Args() {
		path, err := build(*config, format, *out, env)
		if err != nil {
			fmt.Fprintf(os.Stderr, "nfpm %s: %v\n", format, err)
			os.Exit(1)
		}
		fmt.Println(path)
	}
}

func build(config, format, out string, env map[string]string) (string, error) {
	cfg, err := nfpm.ParseFileWithEnvMapping(config, func(k string) string { return env[k] })
	if err != nil {
		return "", err
	}
	info, err := cfg.Get(format)
	if err != nil {
		return "", err
	}
	info = nfpm.WithDefaults(info)
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		var sec int64
		if _, err := fmt.Sscan(epoch, &sec); err == nil {
			info.MTime = unix(sec)
		}
	}
	if err := nfpm.PrepareForPackager(info, format); err != nil {
		return "", err
	}
	packager, err := nfpm.Get(format)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(out, packager.ConventionalFileName(info))
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := packager.Package(info, f); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}
