#!/usr/bin/env bash
# A local PostgreSQL cluster for development and tests, from the system's PostgreSQL binaries.
#
#   scripts/pg.sh start DIR [PORT]  init (if needed) and start a cluster in DIR (on PORT, else a
#                                   free port); prints its admin URL
#   scripts/pg.sh stop DIR          stop it (fast shutdown)
#   scripts/pg.sh crash DIR         stop it like a crash (immediate shutdown: no checkpoint, every
#                                   connection cut; the next start recovers from the WAL)
#   scripts/pg.sh url DIR           the admin URL of a running cluster
#   scripts/pg.sh replica PRIMARY_URL DIR [PORT]
#                                   a streaming replica of the cluster at PRIMARY_URL (an admin URL
#                                   printed by `start`), copied with `pg_basebackup -R` into DIR
#                                   (if not there yet) and started like `start` (hot standby:
#                                   it answers reads); prints its admin URL
#
# PostgreSQL refuses to run as root, so as root the cluster runs as the unprivileged `postgres`
# system user; DIR must then be reachable by that user (callers pick a folder under /var/tmp when
# the work tree is not). It listens on 127.0.0.1 only, on a free port chosen at start, with trust
# authentication: it is a throw-away cluster for one machine, not a deployment.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
port_arg=${3:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|crash|url DIR [PORT] | replica PRIMARY_URL DIR [PORT]" >&2; exit 2; }

find_bin() {
  local name=$1 candidate
  if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return; fi
  for candidate in /usr/lib/postgresql/*/bin/"$name"; do
    [ -x "$candidate" ] && { echo "$candidate"; return; }
  done
  echo "error: PostgreSQL's '$name' was not found. Install PostgreSQL 15 (Debian: apt-get install postgresql) and try again." >&2
  exit 1
}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

case "$cmd" in
  start)
    initdb=$(find_bin initdb); pg_ctl=$(find_bin pg_ctl)
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_owner "$initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { echo "error: initdb failed, see $dir/initdb.log" >&2; exit 1; }
    fi
    if as_owner "$pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      cat "$dir/url"; exit 0
    fi
    port=${port_arg:-$(free_port)}
    # fsync off: a throw-away cluster; durability is not what these runs test, speed is welcome.
    as_owner "$pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 start \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" >/dev/null \
      || { echo "error: PostgreSQL did not start, see $dir/postgres.log" >&2; exit 1; }
    url="postgres://postgres@127.0.0.1:$port/postgres"
    echo "$url" > "$dir/url.tmp" && mv "$dir/url.tmp" "$dir/url" 2>/dev/null || echo "$url" > "$dir/url"
    echo "$url"
    ;;
  stop)
    pg_ctl=$(find_bin pg_ctl)
    [ -d "$dir/data" ] && as_owner "$pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    ;;
  crash)
    pg_ctl=$(find_bin pg_ctl)
    [ -d "$dir/data" ] && as_owner "$pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    ;;
  url)
    cat "$dir/url"
    ;;
  replica)
    # A cluster started by `start` accepts replication connections as is: PostgreSQL 15's
    # defaults (wal_level = replica, max_wal_senders = 10) and initdb's pg_hba.conf with
    # --auth=trust (a `host replication all 127.0.0.1/32 trust` line).
    primary_url=$dir; dir=${3:-}; port_arg=${4:-}
    [ -n "$dir" ] || { echo "usage: $0 replica PRIMARY_URL DIR [PORT]" >&2; exit 2; }
    basebackup=$(find_bin pg_basebackup)
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      # -R: standby.signal and primary_conninfo written, so it starts as a streaming standby.
      as_owner "$basebackup" -d "$primary_url" -D "$dir/data" -R -X stream -c fast >"$dir/basebackup.log" 2>&1 \
        || { echo "error: pg_basebackup failed, see $dir/basebackup.log" >&2; exit 1; }
    fi
    exec bash "$0" start "$dir" $port_arg
    ;;
  *)
    echo "usage: $0 start|stop|crash|url DIR [PORT] | replica PRIMARY_URL DIR [PORT]" >&2; exit 2;;
esac
