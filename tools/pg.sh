#!/usr/bin/env bash
# tools/pg.sh start|stop|url — a throwaway PostgreSQL cluster for the tests of
# the PostgreSQL store: Debian's server binaries (installed when missing), data in
# .pg/ (git-ignored), listening on 127.0.0.1:$REFDATA_PG_PORT (54329) with trust
# auth for the user refdata. Durability settings are off: the tests restart the
# server cleanly, they never need it to survive a power cut. `url` prints the
# connection URL when the cluster runs (and nothing, exit 1, when it does not).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${REFDATA_PG_DIR:-$PWD/.pg}
PORT=${REFDATA_PG_PORT:-54329}
URL="postgres://refdata@127.0.0.1:$PORT/postgres?sslmode=disable"

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
# initdb and the server refuse to run as root: run them as postgres then.
as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case "${1:-}" in
start)
  BIN=$(bindir)
  if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    BIN=$(bindir)
  fi
  mkdir -p "$DIR"
  [ "$(id -u)" = 0 ] && chown postgres: "$DIR"
  if [ ! -f "$DIR/data/PG_VERSION" ]; then
    as_owner "$BIN/initdb" -D "$DIR/data" -U refdata --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  fi
  if ! as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/data/server.log" -w -t 60 \
      -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
      start >/dev/null
  fi
  echo "$URL"
  ;;
stop)
  BIN=$(bindir)
  [ -f "$DIR/data/PG_VERSION" ] && as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null || true
  ;;
restart)
  BIN=$(bindir)
  as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast -w restart >/dev/null
  ;;
url)
  BIN=$(bindir)
  [ -n "$BIN" ] && [ -f "$DIR/data/PG_VERSION" ] && as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1 || exit 1
  echo "$URL"
  ;;
*)
  echo "usage: tools/pg.sh start|stop|restart|url" >&2; exit 2 ;;
esac
