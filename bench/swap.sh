#!/usr/bin/env bash
# A new version going live under load (BENCHMARKS.md):
# imports FROM into a fresh store, starts `serve --data` on it, measures wrk's
# latency on PATH at rest, then imports TO while the same load runs and reports
# how long after the import exited the server first answered with TO's
# manifestId, wrk's p50/p99/p999 from the publish on (SECONDS_LOAD, which
# should cover the swap: the script says when it did not), and the CPU the
# server used over that span.
#
#   go build -o bin/refdata ./cmd/refdata
#   bench/swap.sh ../shared/data/upstream-en-US/13_… ../shared/data/upstream-en-US/14_…
#
# WINDOWS=N measures instead N consecutive 1 s windows from the publish on (the
# swap's timeline), and how long the server's threads waited in the kernel's run
# queue meanwhile (/proc/PID/task/*/schedstat) against the same span at rest.
#
# DELAY_MS=D paces the load: each of the CONNS connections (default 32) waits D ms
# after an answer before its next request, so the server is busy part of the
# time, as a server beside its applications is, instead of saturated (the
# default: no pause, the load generator asks as fast as the server answers).
#
# Needs wrk, curl, python3. BIN, PORT, BENCH_PATH, SECONDS_LOAD, CONNS and
# DELAY_MS override the defaults.
set -euo pipefail
from=${1:?usage: bench/swap.sh FROM_SNAPSHOT TO_SNAPSHOT}
to=${2:?usage: bench/swap.sh FROM_SNAPSHOT TO_SNAPSHOT}
bin=${BIN:-bin/refdata}
port=${PORT:-18124}
path=${BENCH_PATH:-/v1/version}
load=${SECONDS_LOAD:-8}
ua='bench/1.0 (+http://localhost)'
bench_dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'kill "$pid" ${poll_pid:-} 2>/dev/null || true; [ -n "${KEEP_LOG:-}" ] && cp "$tmp/serve.log" "$KEEP_LOG"; rm -rf "$tmp"' EXIT

"$bin" import --data "$tmp/store" "$from" >/dev/null 2>&1
"$bin" serve --data "$tmp/store" --addr "127.0.0.1:$port" --log-level info 2>"$tmp/serve.log" &
pid=$!
until curl -sf -o /dev/null -A "$ua" "http://127.0.0.1:$port/v1/version"; do sleep 0.01; done

# wrk's own percentiles, p999 included; DELAY_MS adds a pause to the script.
cp "$bench_dir/percentiles.lua" "$tmp/p.lua"
if [ -n "${DELAY_MS:-}" ]; then echo "delay = function() return $DELAY_MS end" >> "$tmp/p.lua"; fi
run_wrk() { wrk -t1 -c"${CONNS:-32}" -d"${1}s" -H "User-Agent: $ua" -s "$tmp/p.lua" "http://127.0.0.1:$port$path" | tail -1; }

# CPU the server has used so far, in ms: on a host whose neighbours move the
# p99 from run to run, the steadier measure of what a swap costs.
tick=$((1000 / $(getconf CLK_TCK)))
cpu() { awk -v t="$tick" '{print ($14+$15)*t}' /proc/"$pid"/stat; }
spent() { echo "cpu over the span: server $(( $2 - $1 )) ms"; }

# CPU and run-queue wait of the server's threads so far, in ms.
sched() { cat /proc/"$pid"/task/*/schedstat 2>/dev/null | awk '{c+=$1; w+=$2} END {printf "%d %d\n", c/1e6, w/1e6}'; }
waited() { echo "server threads over the span: $(( $3 - $1 )) ms on CPU, $(( $4 - $2 )) ms waiting for one"; }

if [ -n "${WINDOWS:-}" ]; then
  before=$(sched); echo "at rest:      $(run_wrk "$WINDOWS")"; echo "              $(waited $before $(sched))"
  "$bin" import --data "$tmp/store" "$to" >"$tmp/import.log" 2>&1
  published=$(date +%s%N); before=$(sched)
  for i in $(seq "$WINDOWS"); do
    echo "window $i:     $(run_wrk 1) (ended $(( ($(date +%s%N) - published) / 1000000 )) ms after the publish)"
  done
  echo "              $(waited $before $(sched))"
  exit 0
fi

echo "at rest:      $(run_wrk "$load")"

want=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print((d.get("data") or d)["manifestId"])' "$to/version.json" 2>/dev/null || true)
# One process polls for the first answer naming TO (bench/firstanswer.py says
# why not a curl per poll).
python3 "$bench_dir/firstanswer.py" "$port" "${want:-x}" > "$tmp/live.txt" &
poll_pid=$!
"$bin" import --data "$tmp/store" "$to" >"$tmp/import.log" 2>&1
published=$(date +%s%N)
cpu_before=$(cpu)
# The load during the swap starts when the import has exited (the publish) and
# lasts as long as the load at rest, so both percentiles cover the same span.
run_wrk "$load" > "$tmp/during.txt" &
wrk_pid=$!
if ! wait "$poll_pid"; then echo "TO never served"; exit 1; fi
live=$(cat "$tmp/live.txt")
wait "$wrk_pid"
cpu_after=$(cpu)
echo "during swap:  $(cat "$tmp/during.txt")"
echo "              $(spent $cpu_before $cpu_after)"
ms=$(((live - published) / 1000000))
printf 'live after:   %d ms (import exit to the first answer with manifestId %s)\n' "$ms" "$want"
# The publish itself: when the import wrote the pointer (ACTIVE is written, then
# renamed into place). An import that holds much memory takes a while to exit
# after it, which "live after" counts and this does not.
written=$(stat -c %.9Y "$tmp/store/ACTIVE" | tr -d .)
printf 'from publish: %d ms (ACTIVE written to that answer; the import exited %d ms after it)\n' \
  $(((live - written) / 1000000)) $(((published - written) / 1000000))
if (( ms > load * 1000 )); then echo "note: the swap outlasted the ${load} s of load measured during it"; fi
