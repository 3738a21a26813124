#!/usr/bin/env bash
# Builds ./mcpsandbox (what hosts run), with its version and commit stamped
# in, ./mcpsandbox-demo (the demo and its example server) and
# ./mcpsandbox-provenance (which prepare runs to verify Sigstore provenance).
set -euo pipefail
cd "$(dirname "$0")/.."
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}
commit=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
go build -trimpath -ldflags "-X main.version=$version -X main.commit=$commit" -o mcpsandbox ./cmd/mcpsandbox
go build -trimpath -o mcpsandbox-demo ./cmd/mcpsandbox-demo
go build -trimpath -o mcpsandbox-provenance ./cmd/mcpsandbox-provenance
