#!/usr/bin/env bash
# deploy/check.sh (make deploy-check) — the deployment files checked on this
# machine, with no container engine, no cluster and no running systemd:
#   the systemd units by systemd-analyze verify (any warning fails), against
#   the binary make build makes, and each refdata command line in them run
#   with --dry-run by that binary,
#   the alerts by promtool check rules and promtool test rules (Debian's
#   prometheus, installed when missing),
#   the container image built and inspected (deploy/image),
#   the HAProxy configuration by haproxy -c (Debian's haproxy, installed when missing),
#   deploy/kubernetes by kubectl kustomize, where kubectl is installed,
#   the Go tests of deploy/: compose.yaml as Compose loads it, every manifest
#   decoded strictly, and the quick start of docs/operations.md run as written.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { echo "-- $*"; }

step "make build; systemd-analyze verify deploy/systemd against it"
make --no-print-directory build
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# A root of its own: the units in /etc/systemd/system, the system's targets they
# order against, and the executables their Exec lines name, where they name
# them: the binary just built, and systemd's own tools (verify checks that
# each is an executable; it runs nothing).
mkdir -p "$root/etc/systemd/system" "$root/usr/lib/systemd" "$root/usr/local/bin" "$root/usr/bin"
cp -a /usr/lib/systemd/system "$root/usr/lib/systemd/"
install -m 0755 bin/refdata "$root/usr/local/bin/refdata"
cp /usr/bin/systemd-cat /usr/bin/journalctl "$root/usr/bin/"
cp deploy/systemd/* "$root/etc/systemd/system/"
units=$(cd deploy/systemd && echo *)
# verify exits 0 on warnings such as a misspelt setting, so any output fails.
out=$(systemd-analyze verify --root="$root" $units 2>&1) || { echo "$out"; exit 1; }
if [ -n "$out" ]; then echo "$out"; exit 1; fi
for u in $units; do
  case $u in
    *@.service) systemd-analyze security --offline=true --root="$root" "${u%.service}refdata.service.service" | tail -1 ;;
    *.service) systemd-analyze security --offline=true --root="$root" "$u" | tail -1 ;;
  esac
done
# The units' command lines as the built binary takes them.
built=$root/usr/local/bin/refdata
for u in deploy/systemd/*.service; do
  sed -n 's#^ExecStart=/usr/local/bin/refdata ##p' "$u" | while read -r args; do
    # shellcheck disable=SC2086 # the unit's words, as systemd splits them
    "$built" $args --dry-run
  done
done

step "promtool check rules; promtool test rules (deploy/prometheus)"
if ! command -v promtool >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
promtool check rules deploy/prometheus/alerts.yaml
promtool test rules deploy/prometheus/alerts_test.yaml

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
