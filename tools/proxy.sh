#!/usr/bin/env bash
# tools/proxy.sh — the caching proxies of deploy/proxy run for tests, as any user,
# without a system service:
#   install                       Debian's nginx and varnish, with apt-get when missing
#   installed nginx|varnish       exit 0 when that engine is installed
#   start nginx|varnish PORT BACKEND_PORT1 BACKEND_PORT2
#                                 render deploy/proxy's configuration into a new
#                                 directory (printed) with 127.0.0.1:PORT in front
#                                 of the replicas on 127.0.0.1:BACKEND_PORT1 and 2,
#                                 start the engine and wait until it listens
#   stop DIR                      stop what start started in DIR and remove DIR
# DIR holds the rendered configuration, the cache and the logs (nginx:
# logs/access.log with each request's cache status).
set -euo pipefail
cd "$(dirname "$0")/.."

binary() {
  case $1 in
  nginx) echo /usr/sbin/nginx ;;
  varnish) echo /usr/sbin/varnishd ;;
  *) echo "tools/proxy.sh: unknown engine $1 (nginx or varnish)" >&2; exit 2 ;;
  esac
}

# listening PORT waits up to 30 s for a connection to 127.0.0.1:PORT.
listening() {
  for _ in $(seq 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "tools/proxy.sh: nothing listens on 127.0.0.1:$1 after 30 s" >&2
  return 1
}

case "${1:-}" in
install)
  missing=()
  [ -x "$(binary nginx)" ] || missing+=(nginx)
  [ -x "$(binary varnish)" ] || missing+=(varnish)
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  ;;
installed)
  [ -x "$(binary "${2:?engine}")" ]
  ;;
start)
  engine=${2:?engine}; port=${3:?port}; b1=${4:?backend port}; b2=${5:?backend port}
  bin=$(binary "$engine")
  # Readable by the unprivileged users the engines' workers run as under root.
  dir=$(mktemp -d "${TMPDIR:-/tmp}/refdata-proxy-XXXXXX")
  chmod 0755 "$dir"
  echo "$engine" > "$dir/engine"
  case $engine in
  nginx)
    mkdir -p "$dir/logs" "$dir/tmp"
    sed -e "s/127\.0\.0\.1:8000;/127.0.0.1:$port;/" -e "s/127\.0\.0\.1:8081 /127.0.0.1:$b1 /" \
      -e "s/127\.0\.0\.1:8082 /127.0.0.1:$b2 /" deploy/proxy/nginx.conf > "$dir/nginx.conf"
    # nginx forks once it listens.
    "$bin" -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log" -g "pid $dir/pid;"
    ;;
  varnish)
    sed -e "s/\.port = \"8081\";/.port = \"$b1\";/" -e "s/\.port = \"8082\";/.port = \"$b2\";/" \
      deploy/proxy/varnish.vcl > "$dir/varnish.vcl"
    "$bin" -a "127.0.0.1:$port" -f "$dir/varnish.vcl" -n "$dir/varnish" -P "$dir/pid" \
      -p http_gzip_support=off -s malloc,256m 2> "$dir/varnishd.log" || { cat "$dir/varnishd.log" >&2; exit 1; }
    ;;
  esac
  listening "$port"
  echo "$dir"
  ;;
stop)
  dir=${2:?dir}
  [ -f "$dir/engine" ] || { echo "tools/proxy.sh: $dir was not made by start" >&2; exit 2; }
  if [ -f "$dir/pid" ]; then
    pid=$(cat "$dir/pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: tools/proxy.sh install | installed ENGINE | start ENGINE PORT BACKEND_PORT1 BACKEND_PORT2 | stop DIR" >&2; exit 2 ;;
esac
