#!/usr/bin/env bash
# Time from exec to the first 200 on /v1/version of `refdata serve` on the
# embedded data (BENCHMARKS.md): bench/first.sh [BIN] [PORT]
set -euo pipefail
bin=${1:-bin/refdata}
port=${2:-18200}
start=$(date +%s%N)
"$bin" serve --addr "127.0.0.1:$port" 2>/dev/null &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
first=$(python3 "$(dirname "$0")/firstanswer.py" "$port")
echo "first 200: $(((first - start) / 1000000)) ms, RSS $(awk '/VmRSS/{print int($2/1024)}' /proc/"$pid"/status) MB"
