#!/usr/bin/env bash
# deploy/check.sh (make deploy-check) — the deployment files checked on this
# machine, with no container engine, no cluster and no running systemd:
#   the systemd units by systemd-analyze verify (any warning fails),
#   the container image built and inspected (deploy/image),
#   the HAProxy configuration by haproxy -c (Debian's haproxy, installed when missing),
#   deploy/kubernetes by kubectl kustomize, where kubectl is installed,
#   the Go tests of deploy/: compose.yaml as Compose loads it, every manifest
#   decoded strictly, and the quick start of docs/operations.md run as written.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { echo "-- $*"; }

step "systemd-analyze verify deploy/systemd"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# A root of its own: the units in /etc/systemd/system, the system's targets they
# order against, and an executable where ExecStart points (verify checks that it
# is one; it runs nothing).
mkdir -p "$root/etc/systemd/system" "$root/usr/lib/systemd" "$root/usr/local/bin"
cp -a /usr/lib/systemd/system "$root/usr/lib/systemd/"
printf '#!/bin/sh\n' > "$root/usr/local/bin/refdata"
chmod 0755 "$root/usr/local/bin/refdata"
cp deploy/systemd/* "$root/etc/systemd/system/"
units=$(cd deploy/systemd && echo *)
# verify exits 0 on warnings such as a misspelt setting, so any output fails.
out=$(systemd-analyze verify --root="$root" $units 2>&1) || { echo "$out"; exit 1; }
if [ -n "$out" ]; then echo "$out"; exit 1; fi
for u in $units; do
  case $u in *.service)
    systemd-analyze security --offline=true --root="$root" "$u" | tail -1 ;;
  esac
done

step "make image"
make --no-print-directory image
(cd deploy && go run ./image inspect ../bin/refdata-image.tar)

step "haproxy -c -f deploy/haproxy.cfg"
if ! command -v haproxy >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null
fi
haproxy -c -f deploy/haproxy.cfg

if command -v kubectl >/dev/null; then
  step "kubectl kustomize deploy/kubernetes"
  kubectl kustomize deploy/kubernetes >/dev/null && echo "deploy/kubernetes builds"
else
  echo "-- kubectl not installed: kustomize step skipped (the Go test still decodes every manifest)"
fi

step "go test ./... in deploy/"
(cd deploy && go vet ./... && go test -count=1 ./...)
