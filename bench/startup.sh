#!/usr/bin/env bash
# Import, start-up and memory of `refdata serve --data` on one snapshot
# (BENCHMARKS.md): imports SNAPSHOT into a fresh store (timed) and reports the
# store's bytes for the version, starts the server and reports the time from
# exec to the first 200 on /v1/version, the rendered bytes (identity +
# compressed, from /v1/metrics) and the RSS then; then fills the edge memo with
# every target and reports the RSS again.
#
#   go build -o bin/refdata ./cmd/refdata
#   go run ./tools/synth18 -from fixtures/versions/15_… -out /tmp/synth18
#   bench/startup.sh /tmp/synth18
set -euo pipefail
snapshot=${1:?usage: bench/startup.sh SNAPSHOT_DIR}
bin=${BIN:-bin/refdata}
port=${PORT:-18123}
ua='bench/1.0 (+http://localhost)'
tmp=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT

t0=$(date +%s%N)
"$bin" import --data "$tmp/store" "$snapshot" >/dev/null 2>&1
t1=$(date +%s%N)
printf 'import:                  %d ms\n' $(((t1 - t0) / 1000000))
printf 'store, this version:     %d bytes (edition pack %d)\n' "$(du -sb "$tmp"/store/versions/* | cut -f1)" "$(stat -c %s "$tmp"/store/versions/*/EDITION.pack)"
start=$(date +%s%N)
"$bin" serve --data "$tmp/store" --addr "127.0.0.1:$port" 2>/dev/null &
pid=$!
first=$(python3 "$(dirname "$0")/firstanswer.py" "$port") # not a curl loop: bench/firstanswer.py says why

metric() { curl -s -A "$ua" "http://127.0.0.1:$port/v1/metrics" | awk -v m="$1" '$1==m {printf "%d\n", $2}'; }
identity=$(metric 'refdata_rendered_bytes{encoding="identity"}')
gz=$(metric 'refdata_rendered_bytes{encoding="gzip"}')
br=$(metric 'refdata_rendered_bytes{encoding="br"}')
rss() { echo $(( $(awk '/VmRSS/ {print $2}' "/proc/$pid/status") * 1024 )); }
rss_b=$(rss)
rendered=$((identity + gz + br))
printf 'start to first 200:      %d ms\n' $(((first - start) / 1000000))
printf 'rendered bytes:          %d (identity %d, gzip %d, br %d)\n' "$rendered" "$identity" "$gz" "$br"
printf 'RSS:                     %d bytes (%.2f x rendered)\n' "$rss_b" "$(echo "$rss_b/$rendered" | bc -l)"

# Then every target the edge memo can hold (bench/targets.py), requested about three
# times over by one wrk connection, and the RSS with the memo full.
bench_dir=$(dirname "$0")
"$bench_dir/targets.py" "http://127.0.0.1:$port" > "$tmp/targets.txt"
n=$(wc -l < "$tmp/targets.txt")
TARGETS="$tmp/targets.txt" wrk -t1 -c1 -d"${FILL_SECONDS:-20}s" -s "$bench_dir/cycle.lua" "http://127.0.0.1:$port" > "$tmp/wrk.txt"
requests=$(awk '/requests in/ {print $1}' "$tmp/wrk.txt")
rss_b=$(rss)
printf 'memo filled:             %d targets, %d requests\n' "$n" "$requests"
printf 'RSS with the memo full:  %d bytes (%.2f x rendered)\n' "$rss_b" "$(echo "$rss_b/$rendered" | bc -l)"
