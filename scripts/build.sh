#!/usr/bin/env bash
# Builds ./mcpsandbox with its version and commit stamped in.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}
commit=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
go build -trimpath -ldflags "-X main.version=$version -X main.commit=$commit" -o mcpsandbox ./cmd/mcpsandbox
