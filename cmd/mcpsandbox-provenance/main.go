// Command mcpsandbox-provenance verifies the Sigstore provenance of one npm
// package version for `mcpsandbox prepare`, and prints who built it.
//
// It is a program of its own because sigstore-go links net/http, gRPC and
// protobuf, whose initialisation (about 5 ms here) every start of the
// mcpsandbox binary would pay, and hosts start that binary for every server.
//
//	mcpsandbox-provenance NAME VERSION INTEGRITY < BUNDLE
//
// BUNDLE is the SLSA provenance bundle the registry serves for the version.
// The trusted root is $MCPSANDBOX_SIGSTORE_ROOT (a trusted_root.json) when
// set, else Sigstore's public-good instance through its TUF repository,
// cached. It prints the identity as one JSON object and exits 0, or says
// what failed on standard error and exits 1.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mcpsandbox/mcpsandbox/provenance"
)

const maxBundle = 4 << 20

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "mcpsandbox-provenance: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, in io.Reader, out io.Writer) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: mcpsandbox-provenance NAME VERSION INTEGRITY < BUNDLE")
	}
	bundle, err := io.ReadAll(io.LimitReader(in, maxBundle+1))
	if err != nil {
		return err
	}
	if len(bundle) > maxBundle {
		return fmt.Errorf("the bundle is larger than %d bytes", maxBundle)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, err := provenance.OpenRoot(ctx, os.Getenv("MCPSANDBOX_SIGSTORE_ROOT"))
	if err != nil {
		return err
	}
	id, err := provenance.Verify(bundle, provenance.Package{Name: args[0], Version: args[1], Integrity: args[2]}, root)
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(id)
}
