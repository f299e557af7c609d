#!/usr/bin/env bash
# p50, p99 and p999 of each path, the server against nginx serving the same
# bytes (../shared/bench/compare.sh reports p99 and throughput). The nginx is compare.sh's: its tree and
# configuration come from ../shared/bench/benchlib.py, so the two scripts
# measure the same nginx. Each round runs the server, then nginx; the table
# gives the median of ROUNDS rounds.
#
#   bench/tails.sh http://127.0.0.1:18099 bench/paths.txt [--gzip]
#
# ROUNDS (3), DURATION (5s), WARMUP (1s), CONNS (32) and NGINX_WORKERS (2)
# override the defaults; the load is compare.sh's: wrk -t1, the same
# User-Agent, no pause between requests. Needs wrk, nginx, curl, python3.
set -euo pipefail
base=${1:?usage: bench/tails.sh BASE_URL PATHS_FILE [--gzip]}
paths=${2:?usage: bench/tails.sh BASE_URL PATHS_FILE [--gzip]}
gzip=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../../shared/bench/benchlib.py
[ -r "$lib" ] || { echo "tails.sh: needs $lib (compare.sh's helper)" >&2; exit 2; }
ua='bench/1.0 (+http://localhost)'
ae=()
[ "$gzip" = --gzip ] && ae=(-H 'Accept-Encoding: gzip')
work=$(mktemp -d)
chmod 755 "$work" # nginx's workers may run as nobody
ngx_pid=''
trap '[ -n "$ngx_pid" ] && kill "$ngx_pid" 2>/dev/null; rm -rf "$work"' EXIT

# The bytes: each path plain and with gzip, as the server answers them.
i=0
: > "$work/manifest.tsv"
grep -v '^[[:space:]]*\(#\|$\)' "$paths" | awk '{print $1}' > "$work/paths"
while read -r p; do
  ct=$(curl -sf -A "$ua" -o "$work/$i.plain" -w '%{content_type}' "$base$p") ||
    { echo "tails.sh: $base$p did not answer 200" >&2; exit 1; }
  enc=$(curl -sf -A "$ua" -H 'Accept-Encoding: gzip' -o "$work/$i.gz" -D - "$base$p" | tr -d '\r' | awk -F': ' 'tolower($1)=="content-encoding" {print $2}')
  gz=-
  [ "$enc" = gzip ] && gz=$work/$i.gz
  printf '%s\t%s\t%s\t%s\t%s\n' "$i" "$p" "$ct" "$work/$i.plain" "$gz" >> "$work/manifest.tsv"
  i=$((i + 1))
done < "$work/paths"

python3 "$lib" build "$work" "${NGINX_WORKERS:-2}" off < "$work/manifest.tsv"
port=$(python3 "$lib" freeport)
echo "listen 127.0.0.1:$port;" > "$work/nginx/listen.conf"
nginx -p "$work/nginx/" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" < /dev/null > /dev/null 2>&1 &
ngx_pid=$!
ngx=http://127.0.0.1:$port
for try in $(seq 50); do
  curl -s -o /dev/null "$ngx/" && break
  [ "$try" = 50 ] && { echo "tails.sh: nginx did not start: $(tail -2 "$work/nginx/error.log")" >&2; exit 1; }
  sleep 0.1
done

run() { wrk -t1 -c"${CONNS:-32}" -d"$2" -H "User-Agent: $ua" "${ae[@]}" -s "$here/percentiles.lua" "$1" | tail -1; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

printf '# %-58s %9s %9s %7s %7s %7s | %7s %7s %7s | %s\n' path server_rps nginx_rps p50 p99 p999 p50 p99 p999 'p99 ratio'
while read -r p; do
  # Both must send the same bytes.
  if ! curl -sf -A "$ua" "${ae[@]}" -o "$work/s" "$base$p" || ! curl -sf -A "$ua" "${ae[@]}" -o "$work/n" "$ngx$p" ||
    ! cmp -s "$work/s" "$work/n"; then
    echo "$p: the server's and nginx's answers differ; skipped" >&2
    continue
  fi
  if [ "${WARMUP:-1s}" != 0 ]; then run "$base$p" "${WARMUP:-1s}" > /dev/null; run "$ngx$p" "${WARMUP:-1s}" > /dev/null; fi
  : > "$work/s.runs"; : > "$work/n.runs"
  for _ in $(seq "${ROUNDS:-3}"); do
    run "$base$p" "${DURATION:-5s}" >> "$work/s.runs"
    run "$ngx$p" "${DURATION:-5s}" >> "$work/n.runs"
  done
  # col FILE KEY: the median of KEY=value over the rounds in FILE.
  col() { grep -o "$2=[0-9.]*" "$1" | cut -d= -f2 | median; }
  if grep -q 'errors=[1-9]' "$work/s.runs" "$work/n.runs"; then echo "$p: wrk counted errors" >&2; fi
  sp99=$(col "$work/s.runs" p99_ms) np99=$(col "$work/n.runs" p99_ms)
  printf '%-60s %9.0f %9.0f %7.3f %7.3f %7.3f | %7.3f %7.3f %7.3f | %.2f\n' "$p" \
    "$(col "$work/s.runs" rps)" "$(col "$work/n.runs" rps)" \
    "$(col "$work/s.runs" p50_ms)" "$sp99" "$(col "$work/s.runs" p999_ms)" \
    "$(col "$work/n.runs" p50_ms)" "$np99" "$(col "$work/n.runs" p999_ms)" \
    "$(awk -v a="$sp99" -v b="$np99" 'BEGIN {print a / b}')"
done < "$work/paths"
