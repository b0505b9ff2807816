#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for the history store's tests and
# prints its DSN on standard output: Debian's postgresql package (installed
# if missing), a new cluster under a temporary directory owned by the
# postgres user, listening on a local port and a socket of its own.
#   export CLOCKGATE_TEST_POSTGRES=$(scripts/postgres.sh start)
#   scripts/postgres.sh stop
set -euo pipefail
port=${CLOCKGATE_PG_PORT:-54329}
dir=${CLOCKGATE_PG_DIR:-/tmp/clockgate-pg-$port}

bindir() {
  local b
  b=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$b" ] && echo "$b"
}

as_postgres() {
  if [ "$(id -u)" = 0 ]; then
    su postgres -s /bin/sh -c "$*"
  else
    sh -c "$*"
  fi
}

case "${1:-}" in
start)
  if ! bindir >/dev/null; then
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  fi
  bin=$(bindir)
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_postgres "'$bin/initdb' -D '$dir/data' -U postgres -A trust >/dev/null"
  fi
  if ! as_postgres "'$bin/pg_ctl' -D '$dir/data' status" >/dev/null 2>&1; then
    as_postgres "'$bin/pg_ctl' -D '$dir/data' -l '$dir/log' -w -o \"-p $port -k '$dir' -c listen_addresses=127.0.0.1\" start" >&2
  fi
  as_postgres "'$bin/psql' -h '$dir' -p $port -U postgres -tAc \"SELECT 1 FROM pg_database WHERE datname = 'clockgate_test'\"" | grep -q 1 ||
    as_postgres "'$bin/createdb' -h '$dir' -p $port -U postgres clockgate_test" >&2
  echo "postgres://postgres@127.0.0.1:$port/clockgate_test?sslmode=disable"
  ;;
stop)
  bin=$(bindir)
  as_postgres "'$bin/pg_ctl' -D '$dir/data' -m fast stop" >&2 || true
  ;;
*)
  echo "usage: scripts/postgres.sh start|stop" >&2; exit 2 ;;
esac
