#!/usr/bin/env bash
# deploy/image/build.sh [OUT.tar] [TAG] — refdata's container image without a
# container engine: a static linux binary (CGO_ENABLED=0, -trimpath, its commit
# in its build info), then deploy/image writes it as the image's one layer and
# inspects the tarball. IMAGE_ARCH (amd64) picks the architecture, VERSION the
# version the binary reports (git describe).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(realpath -m "${1:-bin/refdata-image.tar}")
tag=${2:-refdata:latest}
arch=${IMAGE_ARCH:-amd64}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
bin=$(realpath -m bin/image/refdata)
src=.
if [ ! -d .git ]; then
  # go records the commit only where .git is a directory; in a linked worktree
  # (.git is a file) build the same commit from a local clone.
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  git clone -q --shared --no-checkout . "$src"
  git -C "$src" checkout -q --detach "$(git rev-parse HEAD)"
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "image: building commit $(git rev-parse --short HEAD); uncommitted changes are not in it" >&2
  fi
fi
mkdir -p "$(dirname "$bin")" "$(dirname "$out")"
# -buildvcs=true on the command line: it wins over a GOFLAGS that turns it off.
(cd "$src" && CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath -buildvcs=true \
  -ldflags="-s -w -X main.version=$version" -o "$bin" ./cmd/refdata)
cd deploy && go run ./image build -binary "$bin" -tag "$tag" -o "$out"
