# Sourced by scripts/test-citus.sh and scripts/bench.sh: Citus nodes on 127.0.0.1 (issue 23).
# Needs common.sh's helpers and the repository root as the working directory.

# citus_available: whether a Citus installation for this PostgreSQL is on the machine.
citus_available() {
  local libdir
  libdir=$(pg_config --pkglibdir 2>/dev/null) || return 1
  [ -f "$libdir/citus.so" ]
}

# citus_node DIR: starts a PostgreSQL node in DIR with Citus loaded (`wal_level = logical` so that
# shards can move, no statistics sent to Citus's makers) and prints its admin URL. The nodes talk
# without TLS (`citus.node_conninfo`; Citus's default requires it): they are all on 127.0.0.1, and
# the relays of the commit-window test read the coordinator's commands to a worker.
citus_node() {
  local dir=$1 u
  u=$(scripts/pg.sh start "$dir") || return 1
  psql "$u" -qX -c "ALTER SYSTEM SET shared_preload_libraries = 'citus'" \
    -c "ALTER SYSTEM SET wal_level = logical" \
    -c "ALTER SYSTEM SET max_connections = 400" \
    -c "ALTER SYSTEM SET max_worker_processes = 32" >/dev/null || return 1
  scripts/pg.sh stop "$dir" >/dev/null
  u=$(scripts/pg.sh start "$dir") || return 1
  # Citus's own settings exist once the library is loaded
  psql "$u" -qX -c "ALTER SYSTEM SET citus.enable_statistics_collection = off" \
    -c "ALTER SYSTEM SET citus.node_conninfo = 'sslmode=disable'" \
    -c "SELECT pg_reload_conf()" >/dev/null || return 1
  echo "$u"
}

# citus_database NAME COORDINATOR WORKER...: database NAME made on every node with the extension,
# the workers added to the coordinator's cluster; prints the database's URL on the coordinator.
# The same steps as tests/src/citus.rs's `create_distributed`, before the migrations.
citus_database() {
  local name=$1 coord=$2 node db; shift 2
  for node in "$@" "$coord"; do
    psql "$node" -qX -c "CREATE DATABASE $name" >/dev/null || return 1
    psql "${node%/postgres}/$name" -qX -c "CREATE EXTENSION citus" >/dev/null || return 1
  done
  db="${coord%/postgres}/$name"
  psql "$db" -qX -c "SELECT citus_set_coordinator_host('127.0.0.1', $(url_port "$coord"))" >/dev/null || return 1
  for node in "$@"; do
    psql "$db" -qX -c "SELECT citus_add_node('127.0.0.1', $(url_port "$node"))" >/dev/null || return 1
  done
  echo "$db"
}

# url_port URL: the port of an admin URL (postgres://user@host:port/db).
url_port() { local h=${1#*://}; h=${h%%/*}; echo "${h##*:}"; }
