#!/usr/bin/env bash
# c15t for `make bench` (called by scripts/bench.sh):
#   c15t.sh install  installs @c15t/backend 2.2.1 (+ kysely, pg, @hono/node-server) into
#                    target/bench/c15t/ (git-ignored) with npm, once (later runs reuse it); bench.sh
#                    runs it in the background while cargo builds
#   c15t.sh start    (installs if needed,) creates database c15t_bench beside $C15T_DB_URL's, starts
#                    scripts/bench/c15t-server.mjs and prints its URL; its pid goes to
#                    $C15T_WORK/c15t.pid
# Time-boxed: any failure prints one line with the reason and exits non-zero.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/target/bench/c15t
fail() { echo "$*" >&2; exit 1; }
command -v node >/dev/null || fail "node is not installed"
command -v npm >/dev/null || fail "npm is not installed"
cmd=${1:-start}
mkdir -p "$dir"
if [ ! -f "$dir/node_modules/@c15t/backend/package.json" ] || [ ! -d "$dir/node_modules/@hono/node-server" ]; then
  echo '{"name":"c15t-bench","private":true,"type":"module"}' > "$dir/package.json"
  timeout 300 npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
    @c15t/backend@2.2.1 kysely pg @hono/node-server >&2 || fail "npm install of @c15t/backend@2.2.1 failed or took over 300 s"
fi
[ "$cmd" = install ] && exit 0
cp "$root/scripts/bench/c15t-server.mjs" "$dir/server.mjs"
admin=${C15T_DB_URL%/*}/postgres
c15t_db=${C15T_DB_URL%/*}/c15t_bench
psql "$admin" -qc "DROP DATABASE IF EXISTS c15t_bench" >/dev/null 2>&1 || true
psql "$admin" -qc "CREATE DATABASE c15t_bench" >/dev/null || fail "could not create database c15t_bench"
C15T_DB_URL=$c15t_db NODE_ENV=production node "$dir/server.mjs" > "$C15T_WORK/c15t.out" 2> "$C15T_WORK/c15t.log" &
pid=$!
echo "$pid" > "$C15T_WORK/c15t.pid"
for _ in $(seq 1 1200); do
  if grep -q '^c15t listening on ' "$C15T_WORK/c15t.out" 2>/dev/null; then
    grep -m1 '^c15t listening on ' "$C15T_WORK/c15t.out" | sed 's/^c15t listening on //'; exit 0
  fi
  kill -0 "$pid" 2>/dev/null || fail "c15t server exited: $(grep -v '^\s*$' "$C15T_WORK/c15t.log" | tail -1 | cut -c1-200)"
  sleep 0.1
done
kill "$pid" 2>/dev/null || true
fail "c15t server did not start within 120 s"
