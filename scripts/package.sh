#!/usr/bin/env bash
# Builds the .deb and .rpm of mcpsandbox into dist/: the binary (as
# scripts/build.sh builds it, but position-independent and stripped, as
# distributions ship binaries), its man pages (mcpsandbox help --man) and
# packaging/ (units, AppArmor profile, example config, maintainer scripts),
# put together by packaging/nfpm. FORMATS="deb" builds one.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.0.0)}
commit=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
# Package versions start with a digit: a bare commit becomes 0.0.0+g<commit>.
pkgversion=${version#v}
[[ $pkgversion =~ ^[0-9]+\. ]] || pkgversion=0.0.0+g$pkgversion
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -trimpath -buildmode=pie -ldflags "-s -w -X main.version=$version -X main.commit=$commit" -o "$work/mcpsandbox" ./cmd/mcpsandbox
go build -trimpath -buildmode=pie -ldflags "-s -w" -o "$work/mcpsandbox-provenance" ./cmd/mcpsandbox-provenance
# The packages depend on the newest glibc either binary uses.
glibc=$(objdump -T "$work/mcpsandbox" "$work/mcpsandbox-provenance" | grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -1)
glibc=${glibc#GLIBC_}

"$work/mcpsandbox" help --man "$work/man"
gzip -9n "$work"/man/*.1

# Debian wants a changelog; the project's history is git's.
mkdir -p "$work/doc"
maintainer=$(sed -n 's/^maintainer: //p' packaging/nfpm.yaml)
cat >"$work/doc/changelog.Debian" <<CHANGES
mcpsandbox ($pkgversion-1) unstable; urgency=medium

  * Built from git commit ${commit:0:12}.

 -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")
CHANGES
gzip -9n "$work/doc/changelog.Debian"

# shellcheck disable=SC2086 # FORMATS is a list
GLIBC=$glibc DOCDIR=$work/doc go run ./packaging/nfpm -version "$pkgversion" -arch "$(go env GOARCH)" \
  -binary "$work/mcpsandbox" -provenance "$work/mcpsandbox-provenance" -man "$work/man" -out "${OUT:-dist}" ${FORMATS:-deb rpm}
