#!/usr/bin/env bash
# At the public API's real size (BENCHMARKS.md § At real size): K× the sample's
# items with fresh UUIDs, every text field in 18 locales (tools/synth18 -scale),
# versions 14 and 15 of the sample made alike, so 15 changes what the sample's 15
# changes. Measures, on the file store and on PostgreSQL: each import's wall time
# and peak RSS, the store's growth from the second version, the largest value in
# the database, a replica's first 200 after exec and its RSS with one version and
# through a swap, how long after its import exits a new version is live, and a
# sync of version 15 from a stand-in upstream (tools/standin: every catalog in
# every locale its own answer).
#
#   make build && bench/realsize.sh            # K=4
#   K=10 bench/realsize.sh                     # the 10× versions import and serve
#   BULK=1 bench/realsize.sh                   # also a store made with --bulk-files
#
# Needs python3 (bench/firstanswer.py), curl and, for PostgreSQL, tools/pg.sh's
# server (PG_URL overrides it; PG=0 skips it). BIN, K and WORK override the defaults.
set -euo pipefail
bin=${BIN:-bin/refdata}
k=${K:-4}
work=${WORK:-${TMPDIR:-/tmp}/refdata-realsize}
bench=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$bench/.." && pwd)
ua='bench/1.0 (+http://localhost)'
port=${PORT:-18440}
mkdir -p "$work"
pids=()
trap 'for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done' EXIT

# The versions, made once per K.
for v in 14 15; do
  out="$work/s$k-$v"
  if [ ! -f "$out/version.json" ]; then
    (cd "$root" && go run ./tools/synth18 -scale "$k" -from fixtures/versions/${v}_* -out "$out") >/dev/null
  fi
done
echo "data: $(du -sbL "$work/s$k-15" | cut -f1) bytes of JSON in version 15 (K=$k)"

# measure CMD...: wall seconds and peak RSS in MB of one command.
measure() {
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/out" 2>&1 || { cat "$work/out"; return 1; }
  read -r wall kb <"$work/time"
  echo "$wall s, $((kb / 1024)) MB"
}
rss() { awk '/VmRSS/{print int($2/1024)}' /proc/"$1"/status; }
manifest() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print((d.get("data") or d)["manifestId"])' "$1/version.json"; }

# replica STORE-ARGS: first 200 after exec and RSS; then a swap to 15 and RSS.
replica() {
  local label=$1; shift
  local start first pid
  start=$(date +%s%N)
  "$bin" serve "$@" --addr "127.0.0.1:$port" 2>"$work/serve.log" &
  pid=$!; pids+=("$pid")
  first=$(python3 "$bench/firstanswer.py" "$port")
  echo "$label replica: first 200 $(((first - start) / 1000000)) ms after exec, RSS $(rss "$pid") MB"
  for p in /v1/weapons /v1/weapons/skins '/v1/weapons/skins?language=ja-JP' '/v1/buddies?language=all' /v1/diff/latest; do
    curl -s -o /dev/null -A "$ua" -H 'Accept-Encoding: gzip' "127.0.0.1:$port$p"
    curl -s -o /dev/null -A "$ua" "127.0.0.1:$port$p"
  done
  echo "$label replica: RSS $(rss "$pid") MB after the big lists, plain and gzip"
  echo "$pid" >"$work/pid"
}

# swap PID IMPORT-ARGS: import 15 while serving, then how long until it is live.
swap() {
  local label=$1 pid=$2; shift 2
  python3 "$bench/firstanswer.py" "$port" "$(manifest "$work/s$k-15")" >"$work/live" &
  local poll=$!
  "$bin" import "$@" "$work/s$k-15" >/dev/null 2>&1
  local done_at; done_at=$(date +%s%N)
  wait "$poll"
  echo "$label: 15 live $((($(cat "$work/live") - done_at) / 1000000)) ms after its import exited; replica RSS $(rss "$pid") MB"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

# Sync from a stand-in upstream into an empty store.
(cd "$root" && go build -o "$work/standin" ./tools/standin)
"$work/standin" -addr "127.0.0.1:$((port + 1))" "$work/s$k-15" 2>/dev/null &
pids+=("$!")
until curl -sf -o /dev/null "127.0.0.1:$((port + 1))/v1/version"; do sleep 0.1; done
rm -rf "$work/sync$k"
echo "sync --once of 15 from a stand-in: $(measure "$bin" sync --from "http://127.0.0.1:$((port + 1))" --data "$work/sync$k" --once --contact mailto:bench@example.org)"
rm -rf "$work/sync$k"

# File store.
store="$work/file$k"
rm -rf "$store"
echo "file store: import 14: $(measure "$bin" import --data "$store" "$work/s$k-14")"
first=$(du -sb "$store" | cut -f1)
echo "file store: 14 stored in $first bytes"
replica file --data "$store"; pid=$(cat "$work/pid")
echo "file store: import 15 (served): $(measure "$bin" import --data "$store" "$work/s$k-15")" # timing includes the replica beside it
second=$(du -sb "$store" | cut -f1)
echo "file store: 15 added $((second - first)) bytes, $(((second - first) * 100 / first)) % of the first"
kill "$pid"; wait "$pid" 2>/dev/null || true
"$bin" activate --data "$store" "$(manifest "$work/s$k-14")" >/dev/null
rm -rf "$store/versions/$(manifest "$work/s$k-15")"
replica "file (14 again)" --data "$store" >/dev/null; pid=$(cat "$work/pid")
swap "file store" "$pid" --data "$store"

# With bulk files (BULK=1): what they add to each import and to the store.
if [ "${BULK:-0}" = 1 ]; then
  bstore="$work/bulk$k"
  rm -rf "$bstore"
  echo "file store, --bulk-files: import 14: $(measure "$bin" import --bulk-files --data "$bstore" "$work/s$k-14")"
  first=$(du -sb "$bstore" | cut -f1)
  echo "file store, --bulk-files: import 15: $(measure "$bin" import --bulk-files --data "$bstore" "$work/s$k-15")"
  second=$(du -sb "$bstore" | cut -f1)
  echo "file store, --bulk-files: 14 stored in $first bytes; 15 added $((second - first)), $(((second - first) * 100 / first)) %"
  rm -rf "$bstore"
fi

# PostgreSQL.
if [ "${PG:-1}" = 1 ]; then
  url=${PG_URL:-$("$root/tools/pg.sh" url)}
  schema="realsize$k"
  psql "$url" -qc "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema;" >/dev/null
  sep='?'; case "$url" in *\?*) sep='&';; esac
  u="$url${sep}search_path=$schema"
  echo "postgres: import 14: $(measure "$bin" import --store "$u" "$work/s$k-14")"
  echo "postgres: import 15: $(measure "$bin" import --store "$u" "$work/s$k-15")"
  psql "$url" -Atc "SELECT 'postgres: largest value ' || max(m) || ' bytes' FROM (SELECT max(octet_length(body)) m FROM $schema.refdata_segments UNION ALL SELECT max(octet_length(body)) FROM $schema.refdata_index_parts UNION ALL SELECT max(octet_length(body)) FROM $schema.refdata_contents) x"
  cache="$work/pgcache$k"
  rm -rf "$cache"
  replica "postgres (cold cache)" --store "$u" --cache-dir "$cache"; pid=$(cat "$work/pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  replica "postgres (warm cache)" --store "$u" --cache-dir "$cache"; pid=$(cat "$work/pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "postgres: the replica's segment cache holds $(du -sb "$cache" | cut -f1) bytes (two versions)"
fi
