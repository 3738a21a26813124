package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/lock"
	"github.com/mcpsandbox/mcpsandbox/npmregistry"
)

// Sigstore's verifier links net/http, gRPC and protobuf, which this
// binary does not (hosts start it for every server): provenance is
// verified by the program mcpsandbox-provenance, installed beside it.

const (
	provenanceProgram = "mcpsandbox-provenance"
	provenanceTimeout = 2 * time.Minute
)

// provenanceOf verifies v's provenance when the registry serves it, and
// returns who built it; nil when there is none to verify, which is logged.
func provenanceOf(ctx context.Context, client *npmregistry.Client, v *npmregistry.Version, log *slog.Logger) (*lock.Provenance, error) {
	if v.Attestations == nil {
		log.Warn("mcpsandbox: " + v.String() + ": provenance not verified: the registry serves no attestations for it")
		return nil, nil
	}
	atts, err := client.Attestations(ctx, v)
	if err != nil {
		return nil, err
	}
	var bundle []byte
	for _, a := range atts {
		if a.PredicateType == npmregistry.ProvenancePredicate {
			bundle = a.Bundle
		}
	}
	if bundle == nil {
		log.Warn("mcpsandbox: " + v.String() + ": provenance not verified: its attestations hold no SLSA provenance")
		return nil, nil
	}
	if os.Getenv("MCPSANDBOX_PROVENANCE") == "off" {
		log.Warn("mcpsandbox: " + v.String() + ": PROVENANCE NOT VERIFIED though the registry serves it: MCPSANDBOX_PROVENANCE=off turns the check off")
		return nil, nil
	}
	verifier, err := provenanceVerifier()
	if err != nil {
		// Fail closed: the registry says who built it, and nothing here can check it.
		return nil, fmt.Errorf("%s: its provenance cannot be verified: %s, which verifies it, was found %v: install it beside mcpsandbox (go build -o %s ./cmd/mcpsandbox-provenance), or set MCPSANDBOX_PROVENANCE=off to prepare it unverified", v, provenanceProgram, err, filepath.Join(filepath.Dir(os.Args[0]), provenanceProgram))
	}
	ctx, cancel := context.WithTimeout(ctx, provenanceTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, verifier, v.Name, v.Version, v.Integrity)
	var out, errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(bundle), &out, &errOut
	if err := cmd.Run(); err != nil {
		// Killed unanswered, or never started: no verdict on the provenance.
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: its provenance could not be verified: %s did not answer (%v); refused", v, verifier, context.Cause(ctx))
		}
		if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) {
			return nil, fmt.Errorf("%s: its provenance could not be verified: %v; refused", v, err)
		}
		why := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(errOut.String()), provenanceProgram+": "))
		if why == "" {
			why = err.Error()
		}
		return nil, fmt.Errorf("%s: its provenance does not verify: %s; refused", v, why)
	}
	var id struct{ Issuer, Repository, Workflow, Commit string }
	if err := json.Unmarshal(out.Bytes(), &id); err != nil {
		return nil, fmt.Errorf("%s: %s answered %q: %v", v, verifier, out.String(), err)
	}
	log.Info("mcpsandbox: "+v.String()+": provenance verified", "repository", id.Repository, "workflow", id.Workflow, "commit", id.Commit, "issuer", id.Issuer)
	p := lock.Provenance(id)
	return &p, nil
}

// provenanceVerifier is mcpsandbox-provenance: $MCPSANDBOX_PROVENANCE
// when set (but to off), else beside this program, else in ../libexec/mcpsandbox from
// it (where the packages install it), else on PATH.
func provenanceVerifier() (string, error) {
	if path := os.Getenv("MCPSANDBOX_PROVENANCE"); path != "" {
		return path, nil
	}
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		for _, p := range []string{filepath.Join(dir, provenanceProgram), filepath.Join(dir, "..", "libexec", "mcpsandbox", provenanceProgram)} {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return filepath.Clean(p), nil
			}
		}
	}
	path, err := exec.LookPath(provenanceProgram)
	if errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("neither beside %s nor in ../libexec/mcpsandbox nor on PATH", os.Args[0])
	}
	return path, err
}
