#!/usr/bin/env bash
# `make test-citus` (issue 23, parts 4 and 5): the end-to-end suite on a Citus cluster, when a
# Citus installation for PostgreSQL 15 is on this machine (`citus.so` in `pg_config
# --pkglibdir`). Without one it says so and exits 0: CI does not run it (no Citus package is
# reachable from CI's machines; docs/scaling.md, "make test-citus").
#
# What it does, on 127.0.0.1 only, every node stopped and removed on exit:
#   1. a coordinator and two workers (`citus.enable_statistics_collection = off`; `wal_level =
#      logical` so that shards can move), and a third worker kept aside for the growth test;
#   2. the end-to-end suite (`consent-testkit`), each test on a database of its own made on every
#      node, migrated and distributed by scripts/citus/distribute.sql (tests/src/citus.rs);
#   3. the growth test (`citus_growth`, ignored by `make test`): the third worker added and
#      `citus_rebalance_start()` run while two companies create and read;
#   3b. the feed across a two-phase commit (`citus_commit_window`, ignored by `make test` too): a
#      creation held between its coordinator's commit and its worker's, through relays;
#   4. for every statement the service sent, whether Citus planned it on one shard (router) or
#      several (scripts/citus_plans.py over the coordinator's log), written to
#      target/citus/plans.tsv with a summary on the terminal.
# Extra arguments go to cargo nextest (a filter, e.g. `make test-citus ARGS='-E test(webhooks)'`).
set -uo pipefail
source "$(dirname "$0")/common.sh"
root=$(repo_root)
cd "$root"

source scripts/citus/nodes.sh
if ! citus_available; then
  echo "make test-citus: no Citus for PostgreSQL 15 here (no citus.so in $(pg_config --pkglibdir 2>/dev/null || echo 'pg_config --pkglibdir'))."
  echo "It needs a Citus 13 installation for PostgreSQL 15, as Citus's own packages provide"
  echo "(docs/scaling.md, \"make test-citus\"). Nothing was run."
  exit 0
fi
require cargo "install Rust (https://rustup.rs)"
require python3 "install Python 3"

cargo build --workspace --bins --quiet || exit 1

out=target/citus
mkdir -p "$out"
base=$(cluster_dir "citus-$$")
nodes=(coord w1 w2 w3)
cleanup() {
  for n in "${nodes[@]}"; do scripts/pg.sh stop "$base/$n" >/dev/null 2>&1; done
  rm -rf "$base"
}
trap cleanup EXIT

declare -A url
for n in "${nodes[@]}"; do
  u=$(citus_node "$base/$n") || exit 1
  if [ "$n" = coord ]; then
    # every statement with its session's application_name, and a line for each statement Citus
    # splits into several tasks (planned on several shards), followed by that statement
    psql "$u" -qX -c "ALTER SYSTEM SET log_statement = 'all'" \
      -c "ALTER SYSTEM SET log_line_prefix = '%m [%p] %a: '" \
      -c "ALTER SYSTEM SET citus.multi_task_query_log_level = 'log'" \
      -c "ALTER SYSTEM SET log_min_error_statement = 'log'" >/dev/null || exit 1
  fi
  psql "$u" -qX -c "SELECT pg_reload_conf()" >/dev/null || exit 1
  url[$n]=$u
done
echo "coordinator: ${url[coord]}; workers: ${url[w1]} ${url[w2]}; spare worker: ${url[w3]}"

export TEST_DATABASE_URL=${url[coord]}
export TEST_CITUS_WORKERS="${url[w1]},${url[w2]}"
export TEST_CITUS_SPARE_WORKER=${url[w3]}

status=0
echo "== the end-to-end suite on Citus"
# `--workspace` narrowed to the testkit's tests, not `-p consent-testkit`: the same feature set
# as `make test`'s build, so its compiled crates are reused (`-p` unifies the dependencies'
# features for that one package and rebuilt most of them). nextest ORs several `-E`, so a
# filter given in ARGS is ANDed into the package's here.
args=(); filtered=""
while [ $# -gt 0 ]; do
  case "$1" in
    -E|--filterset|--filter-expr) args+=("$1" "package(consent-testkit) & ($2)"); filtered=1; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ -n "$filtered" ] || args+=(-E 'package(consent-testkit)')
cargo nextest run --workspace --no-fail-fast "${args[@]}" 2>&1 | tee "$out/suite.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== growth (a third worker and a rebalance under load), and the feed across a two-phase commit"
cargo nextest run --workspace --no-fail-fast --run-ignored ignored-only \
  -E 'package(consent-testkit) & (test(citus_growth) | test(citus_commit_window))' 2>&1 | tee "$out/growth.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== plans of the service's statements (router: one shard; multi-shard: several)"
python3 scripts/citus_plans.py "$base/coord/postgres.log" --app consent-api \
  --tsv "$out/plans.tsv" || status=1
grep -E "^\s+Summary" "$out/suite.log" "$out/growth.log"
exit "$status"
