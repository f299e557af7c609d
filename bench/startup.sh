#!/usr/bin/env bash
# Start-up and memory of `refdata serve --data` on one snapshot (BENCHMARKS.md):
# imports SNAPSHOT into a fresh store, starts the server, and reports the time from
# process start to the first 200 on /v1/version, the rendered bytes (identity +
# compressed, from /v1/metrics) once compression has finished, and the RSS then;
# then fills the edge memo with every target and reports the RSS again. The RSS
# figures include the body file (refdata_body_file_bytes): shared memory that
# VmRSS does not count, which holds a second copy of the large compressed bodies.
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

"$bin" import --data "$tmp/store" "$snapshot" >/dev/null 2>&1
start=$(date +%s%N)
"$bin" serve --data "$tmp/store" --addr "127.0.0.1:$port" 2>/dev/null &
pid=$!
first=$(python3 "$(dirname "$0")/firstanswer.py" "$port") # not a curl loop: bench/firstanswer.py says why

metric() { curl -s -A "$ua" "http://127.0.0.1:$port/v1/metrics" | awk -v m="$1" '$1==m {printf "%d\n", $2}'; }
prev=-1
while :; do
  gz=$(metric 'refdata_rendered_bytes{encoding="gzip"}')
  [ "$gz" = "$prev" ] && [ "$gz" != 0 ] && break
  prev=$gz; sleep 1
done
done_at=$(date +%s%N)
identity=$(metric 'refdata_rendered_bytes{encoding="identity"}')
br=$(metric 'refdata_rendered_bytes{encoding="br"}')
# VmRSS plus the body file, which is not mapped and so not in VmRSS.
rss() { echo $(( $(awk '/VmRSS/ {print $2}' "/proc/$pid/status") * 1024 + $(metric refdata_body_file_bytes) )); }
rss_b=$(rss)
rendered=$((identity + gz + br))
printf 'start to first 200:      %d ms\n' $(((first - start) / 1000000))
printf 'compression finished:    ~%d ms after start (polled each second)\n' $(((done_at - start) / 1000000))
printf 'rendered bytes:          %d (identity %d, gzip %d, br %d)\n' "$rendered" "$identity" "$gz" "$br"
printf 'body file:               %d bytes\n' "$(metric refdata_body_file_bytes)"
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
