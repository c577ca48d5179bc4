#!/usr/bin/env bash
# A pg_auto_failover formation on 127.0.0.1 for tests and demos: a monitor and two data nodes
# (node1, node2) in synchronous replication, with the monitor's and the keepers' timeouts
# shortened so that a lost primary is replaced in seconds rather than the ~50 s of the defaults.
# From Debian's `postgresql-15-auto-failover` (pg_autoctl 2.0). Not a deployment: trust
# authentication, no TLS, one machine (docs/operations.md, "Failover", says how to run one).
#
#   scripts/failover-formation.sh start DIR     create (if needed) and start the formation in DIR;
#                                               prints the service's multi-host URL
#                                               (postgresql://postgres@127.0.0.1:P1,127.0.0.1:P2/consent
#                                               ?target_session_attrs=read-write)
#   scripts/failover-formation.sh stop DIR      stop every process of it (by the pids it recorded)
#   scripts/failover-formation.sh url DIR       the multi-host URL of a started formation
#   scripts/failover-formation.sh primary DIR   the data node the monitor has as primary (node1|node2)
#   scripts/failover-formation.sh kill DIR NODE kill -9 a data node: its keeper and its PostgreSQL
#                                               (the node's whole process group), no shutdown
#   scripts/failover-formation.sh rejoin DIR NODE  start a killed data node again: it rejoins as the
#                                               standby of the new primary (`wait` for it)
#   scripts/failover-formation.sh switchover DIR  `pg_autoctl perform switchover` (planned; waits)
#   scripts/failover-formation.sh wait DIR      wait (up to 60 s) for one primary and one secondary
#
# pg_autoctl, like PostgreSQL, refuses to run as root: as root every process runs as the
# `postgres` system user (DIR is then given to it; pick a folder under /var/tmp). Each
# `pg_autoctl run` is started in a session of its own (setsid), its pid recorded in DIR/<name>.pid:
# that pid is also its process group, which holds the keeper, its sub-processes and the
# PostgreSQL it runs, so `kill` and `stop` reach all of them by that one recorded id.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|url|primary|kill|rejoin|switchover|wait DIR [NODE]" >&2; exit 2; }

PG_BIN=$(ls -d /usr/lib/postgresql/15/bin 2>/dev/null || true)
[ -n "$PG_BIN" ] || { echo "error: PostgreSQL 15 is not installed (apt-get install postgresql-15)" >&2; exit 1; }
AUTOCTL=$(command -v pg_autoctl || true)
[ -n "$AUTOCTL" ] || { echo "error: pg_autoctl not found: apt-get install postgresql-15-auto-failover" >&2; exit 1; }

DBNAME=consent

# The timeouts (docs/operations.md, "Failover"): the monitor checks every node each second and
# declares one unhealthy after 3 s without an answer; a keeper that cannot reach the monitor nor
# its standby for 3 s demotes its own primary (network_partition_timeout), and the monitor
# waits primary_demote_timeout (5 s, above those 3 s) before it promotes the standby, so two
# primaries never take writes at once.
MONITOR_SETTINGS=(
  "pgautofailover.health_check_period=1000"
  "pgautofailover.health_check_timeout=1000"
  "pgautofailover.health_check_max_retries=1"
  "pgautofailover.health_check_retry_delay=500"
  "pgautofailover.node_considered_unhealthy_timeout=3000"
  "pgautofailover.primary_demote_timeout=5000"
  "pgautofailover.startup_grace_period=2000"
)
KEEPER_SETTINGS=(
  "timeout.network_partition_timeout=3"
  "timeout.prepare_promotion_catchup=10"
  "timeout.prepare_promotion_walreceiver=2"
  "timeout.postgresql_restart_failure_timeout=5"
  "timeout.postgresql_restart_failure_max_retries=3"
)

is_root() { [ "$(id -u)" -eq 0 ]; }

as_owner() {
  if is_root; then
    setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"
  else
    "$@"
  fi
}

# A pg_autoctl command in the foreground, its configuration and state inside DIR (never the
# user's home: two formations on one machine share no file).
autoctl() { as_owner env PATH="$PG_BIN:$PATH" PG_CONFIG="$PG_BIN/pg_config" \
  XDG_CONFIG_HOME="$dir/xdg/config" XDG_DATA_HOME="$dir/xdg/data" XDG_RUNTIME_DIR="$dir/xdg/run" \
  "$AUTOCTL" "$@"; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

port_of() { cat "$dir/$1.port"; }

monitor_sql() {
  as_owner "$PG_BIN/psql" -X -q -At -h 127.0.0.1 -p "$(port_of monitor)" -U postgres -d pg_auto_failover -c "$1"
}

node_sql() { # NAME SQL
  as_owner "$PG_BIN/psql" -X -q -At -h 127.0.0.1 -p "$(port_of "$1")" -U postgres -d postgres -c "$2"
}

# Starts `pg_autoctl ARGS...` in the background in a session of its own, its output appended to
# DIR/NAME.log; records its pid in DIR/NAME.pid (it is also its process group's id). setsid
# without --fork execs (a background job of a script is not a group leader), and so do setpriv
# and env, so $! is pg_autoctl's own pid.
spawn() { # NAME ARGS...
  local name=$1; shift
  local as=()
  is_root && as=(setpriv --reuid=postgres --regid=postgres --init-groups --)
  setsid "${as[@]}" env PATH="$PG_BIN:$PATH" PG_CONFIG="$PG_BIN/pg_config" \
    XDG_CONFIG_HOME="$dir/xdg/config" XDG_DATA_HOME="$dir/xdg/data" XDG_RUNTIME_DIR="$dir/xdg/run" \
    "$AUTOCTL" "$@" </dev/null >>"$dir/$name.log" 2>&1 &
  echo $! >"$dir/$name.pid"
}

# `pg_autoctl run` for NAME unless it already runs.
run_node() { # NAME
  local name=$1
  if [ -f "$dir/$name.pid" ] && kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null; then return; fi
  spawn "$name" run --pgdata "$dir/$name"
}

wait_for() { # SECONDS DESCRIPTION COMMAND...
  local seconds=$1 what=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then
      echo "error: $what after ${seconds}s; see the logs in $dir" >&2
      return 1
    fi
    sleep 0.3
  done
}

monitor_ready() { monitor_sql "SELECT 1" | grep -q 1; }

# One node primary and the other secondary, both reported and assigned.
formation_ready() {
  local n
  n=$(monitor_sql "SELECT count(*) FROM pgautofailover.node WHERE formationid = 'default' AND
        ((reportedstate = 'primary' AND goalstate = 'primary') OR
         (reportedstate = 'secondary' AND goalstate = 'secondary'))
        HAVING count(*) FILTER (WHERE reportedstate = 'primary') = 1")
  [ "$n" = 2 ]
}

print_url() {
  echo "postgresql://postgres@127.0.0.1:$(port_of node1),127.0.0.1:$(port_of node2)/$DBNAME?target_session_attrs=read-write"
}

# Creates data node NAME and keeps serving it (--run: the same process, recorded as above).
create_node() { # NAME
  local name=$1 port
  port=$(free_port); echo "$port" >"$dir/$name.port"
  spawn "$name" create postgres --pgdata "$dir/$name" --pgport "$port" --hostname 127.0.0.1 \
    --listen 127.0.0.1 --name "$name" --dbname "$DBNAME" --username postgres \
    --monitor "postgres://autoctl_node@127.0.0.1:$(port_of monitor)/pg_auto_failover?sslmode=disable" \
    --auth trust --no-ssl --run
}

node_registered() { # NAME
  [ "$(monitor_sql "SELECT count(*) FROM pgautofailover.node WHERE nodename = '$1'
        AND reportedstate IN ('single', 'wait_primary', 'primary', 'catchingup', 'secondary')")" = 1 ]
}

stop_group() { # NAME: the process group recorded for NAME, TERM then KILL
  local name=$1 pid
  [ -f "$dir/$name.pid" ] || return 0
  pid=$(cat "$dir/$name.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$dir/$name.pid"
}

case "$cmd" in
  start)
    mkdir -p "$dir/xdg/config" "$dir/xdg/data" "$dir/xdg/run"
    chmod 700 "$dir/xdg/run"
    is_root && chown -R postgres: "$dir"
    if [ ! -f "$dir/monitor/PG_VERSION" ]; then
      port=$(free_port); echo "$port" >"$dir/monitor.port"
      autoctl create monitor --pgdata "$dir/monitor" --pgport "$port" --hostname 127.0.0.1 \
        --auth trust --no-ssl </dev/null >>"$dir/monitor.log" 2>&1 \
        || { echo "error: pg_autoctl create monitor failed, see $dir/monitor.log" >&2; exit 1; }
    fi
    run_node monitor
    wait_for 30 "the monitor did not answer" monitor_ready
    for setting in "${MONITOR_SETTINGS[@]}"; do
      monitor_sql "ALTER SYSTEM SET ${setting%%=*} = '${setting#*=}'" >/dev/null
    done
    monitor_sql "SELECT pg_reload_conf()" >/dev/null
    for name in node1 node2; do
      if [ ! -f "$dir/$name/PG_VERSION" ]; then
        create_node "$name"
        # the second node registers once the first is the primary (its base backup needs one)
        wait_for 90 "$name did not register with the monitor" node_registered "$name"
        if [ "$name" = node1 ]; then
          # Checkpoints at full speed: pg_basebackup (node2's creation, a rejoining node) waits
          # for one, and a spread checkpoint would take most of checkpoint_timeout (minutes).
          # fsync off: a throw-away formation; a killed node's writes are still in the OS's
          # cache, so the failover tests lose nothing by it. Copied to node2 by its base backup.
          node_sql node1 "ALTER SYSTEM SET checkpoint_completion_target = 0" >/dev/null
          node_sql node1 "ALTER SYSTEM SET fsync = off" >/dev/null
          node_sql node1 "SELECT pg_reload_conf()" >/dev/null
        fi
        for setting in "${KEEPER_SETTINGS[@]}"; do
          # The running keeper rewrites its configuration file now and then; a `config set`
          # that reads it mid-write finds no [pg_autoctl] section and fails ("Unrecognized
          # configuration file", seen twice under load): try again.
          wait_for 10 "pg_autoctl config set ${setting%%=*} on $name kept failing" \
            autoctl config set --pgdata "$dir/$name" "${setting%%=*}" "${setting#*=}"
        done
      else
        run_node "$name"
      fi
    done
    wait_for 60 "the formation did not reach one primary and one secondary" formation_ready
    print_url | tee "$dir/url"
    ;;
  wait)
    wait_for 60 "the formation did not reach one primary and one secondary" formation_ready
    ;;
  stop)
    for name in node1 node2 monitor; do stop_group "$name"; done
    ;;
  url)
    cat "$dir/url"
    ;;
  primary)
    monitor_sql "SELECT nodename FROM pgautofailover.node WHERE formationid = 'default' AND reportedstate IN ('primary','wait_primary','single') AND goalstate IN ('primary','wait_primary','single') ORDER BY nodeid LIMIT 1"
    ;;
  kill)
    node=${3:-}
    [ "$node" = node1 ] || [ "$node" = node2 ] || { echo "usage: $0 kill DIR node1|node2" >&2; exit 2; }
    pid=$(cat "$dir/$node.pid")
    # the keeper's process group (keeper, its services, the postmaster and its backends), then
    # the postmaster by its own pid in case it ever left the group
    kill -KILL -- "-$pid" 2>/dev/null || true
    if [ -f "$dir/$node/postmaster.pid" ]; then
      kill -KILL "$(head -1 "$dir/$node/postmaster.pid")" 2>/dev/null || true
    fi
    rm -f "$dir/$node.pid"
    ;;
  rejoin)
    node=${3:-}
    [ "$node" = node1 ] || [ "$node" = node2 ] || { echo "usage: $0 rejoin DIR node1|node2" >&2; exit 2; }
    # a killed node starts again: its keeper rewinds it (pg_rewind) and it follows the new primary
    run_node "$node"
    ;;
  switchover)
    # Its progress table goes to DIR/switchover.log. pg_autoctl 2.0 also logs a harmless
    # "invalid input syntax for type integer" there (its progress display asks the monitor for
    # the nodes of group ''): the switchover itself is unaffected and the exit status is its own.
    autoctl perform switchover --formation default --group 0 --wait 60 \
      --monitor "postgres://autoctl_node@127.0.0.1:$(port_of monitor)/pg_auto_failover?sslmode=disable" \
      </dev/null >>"$dir/switchover.log" 2>&1 \
      || { echo "error: the switchover failed, see $dir/switchover.log" >&2; exit 1; }
    ;;
  *)
    echo "usage: $0 start|stop|url|primary|kill|rejoin|switchover|wait DIR [NODE]" >&2; exit 2;;
esac
