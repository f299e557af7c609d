#!/usr/bin/env bash
# Refresh the Redoc bundle that /docs serves from the binary (no CDN): fetch the
# pinned version from npm with npm's own client, apply our one patch, and write
# the checksums that `go test ./pages` holds the committed file to.
#
#   pages/vendor/redoc/refresh.sh            # the version in VERSION
#   pages/vendor/redoc/refresh.sh 2.5.5      # move the pin (then commit all four files)
set -euo pipefail
cd "$(dirname "$0")"
version=${1:-$(sed -n 's/^redoc //p' VERSION)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent "redoc@$version" >/dev/null)
tar -xzf "$tmp/redoc-$version.tgz" -C "$tmp" package/bundles/redoc.standalone.js package/bundles/redoc.standalone.js.LICENSE.txt package/LICENSE
upstream="$tmp/package/bundles/redoc.standalone.js"

# The one patch: the sidebar's "API docs by Redocly" badge loads its logo from
# https://cdn.redoc.ly. The docs must load nothing from elsewhere, so the URL
# becomes an empty inline SVG. Fail loudly if a new version moved it.
logo='https://cdn.redoc.ly/redoc/logo-mini.svg'
n=$(grep -o "$logo" "$upstream" | wc -l)
if [ "$n" -ne 1 ]; then echo "refresh: expected the logo URL once in redoc $version, found it $n times; review the patch" >&2; exit 1; fi
sed "s#$logo#data:image/svg+xml,%3Csvg%20xmlns=%27http://www.w3.org/2000/svg%27/%3E#" "$upstream" > redoc.standalone.js
if grep -Eo 'src:"https?://[^"]*"' redoc.standalone.js; then echo "refresh: redoc $version loads other remote resources; review" >&2; exit 1; fi

cat "$tmp/package/LICENSE" "$tmp/package/bundles/redoc.standalone.js.LICENSE.txt" > LICENSE.txt
printf 'redoc %s\nupstream-sha256 %s\n' "$version" "$(sha256sum "$upstream" | cut -d' ' -f1)" > VERSION
sha256sum redoc.standalone.js LICENSE.txt > SHA256SUMS
echo "redoc $version: $(wc -c < redoc.standalone.js) bytes; checksums in SHA256SUMS"
