#!/usr/bin/env bash
# `make bench`: a throw-away PostgreSQL, the PGCC simulator and a release build of consent-api,
# a realistic data set loaded with COPY (1,000 companies x 100 use cases, 100,000 consent
# requests, one API key per company), then short load runs, interleaved round by round so that
# drift (CPU frequency, cache, CI neighbours) hits every side alike:
#
#   list         GET /api/casos-de-uso, random company keys             (wrk, then loadgen)
#   list_etag    the same with If-None-Match: the key's ETag, 304 expected (wrk, then loadgen); skipped,
#                saying why, when the list answer has no ETag header
#   create_ativo / create_pendente   POST .../criar/{ativo,pendente}, simulator answering (wrk, loadgen)
#   pgcc_direct  the simulator's POST /pgcc/v1/solicitacoes alone: the PGCC round trip (wrk, loadgen)
#   hash         POST /api/hash-consulta on active loaded requests       (wrk, then loadgen)
#   health       GET /health/live: the HTTP stack's limit                (wrk, then loadgen)
#   pg_list      the list query alone                                     (pgbench -M prepared)
#   pg_key_list  the API-key lookup + the list query                      (pgbench -M prepared)
#   pg_create    the statements one creation sends, captured from the service (pgbench -M prepared,
#                scripts/bench/pgbench_create.sql): the database's own limit for creation
#   pg_create_inflight  the same creation with a separate in-flight table (a lever of issue 15,
#                measured, not built: scripts/bench/pgbench_create_inflight.sql)
#   pg_status_claim  the status worker's claim of 200 due open requests as it was before issue 21
#                (pgbench; rows/s = 200 x tps): the measurement that opened issue 21. Not in the default
#                run since: the index it relied on is gone (17 claims a second on 2026-11-26, where it
#                did 143), and the status work is measured by scripts/bench/status_work.sh (make
#                bench-scale). BENCH_ONLY=pg_status_claim still runs it.
#                (pg_create* each also give a `_net` line: its rate less the prelude SELECT that makes the
#                binds, from pgbench -r's statement latencies: scripts/bench/net_of_prelude.py)
#   c15t_*       @c15t/backend on the same PostgreSQL (scripts/bench/c15t.sh), when it can run
#
# Two load generators: wrk (closed loop: each connection sends its next request when the answer
# comes) gives the maximum req/s; loadgen (crates/loadgen, built with the service; open loop:
# request i is due at i / rate and its latency counts from when it was due, so a slow answer is
# not hidden by the requests it delayed, as with wrk2 or `oha -q --latency-correction`) gives the
# p50/p99 (only of a run that kept its schedule: one that fell more than 5% behind is
# generator-bound, its latency not printed, and loadgen tries again at a lower rate), at BENCH_LOADGEN_FRACTION of the req/s wrk measured for the same scenario just before,
# in the same round (pgcc_direct: at create_ativo's loadgen rate, so the creation overhead
# compares equal loads). Why not oha: `cargo install oha` takes 12-16 min on this 2-core machine,
# more than the whole budget of `make bench`.
#
# While cargo builds, the data set is generated, PostgreSQL started and c15t (npm) installed, in
# the background.
#
# Results: target/bench/results.tsv (one line per scenario, round and tool) and the table between
# the markers of docs/performance.md (the rest of that file is hand-written and kept).
# Knobs: BENCH_SECONDS (5: each wrk and pgbench run), BENCH_LOADGEN_SECONDS (3: each loadgen
# run), BENCH_LOADGEN_FRACTION (0.25), BENCH_LOADGEN_MAX_RATE (10000), BENCH_LOADGEN (1; 0 skips loadgen), BENCH_ROUNDS (2), BENCH_CONNECTIONS
# (16, wrk, loadgen and pgbench alike), BENCH_THREADS (2), BENCH_C15T (1; 0 skips it), BENCH_ONLY
# (space-separated scenario names), BENCH_SHUFFLE (0; 1 loads the use cases in a shuffled order
# across companies, as interleaved synchronizations leave them in production, instead of company
# by company: compare the two for storage order), BENCH_PERF (set: a `perf record -g` of the
# process under test per run, target/bench/run/perf-<scenario>-<round>.data; it perturbs the
# numbers), BENCH_CITUS (0; 1, when Citus is installed: the same data set also on a Citus coordinator
# and two workers, distributed by scripts/citus/distribute.sql with BENCH_CITUS_SHARDS (32, Citus's
# default) shards a table, and a second consent-api on it; each HTTP scenario of list, create_ativo,
# create_pendente and hash then also runs as `<scenario>@citus` right after its one-node run, in
# the same round, and the report adds the Citus / one node ratios; PG CPU of a Citus run is the
# three nodes'). With BENCH_ONLY or BENCH_PERF the table is printed, not written.
# Not part of `make test` nor CI. Everything listens on 127.0.0.1 and every run is time-bounded.
# consent-api runs with its per-company rate limit raised out of reach (1,000,000/s): a random key
# of 1,000 per request at 30,000 req/s is 30 req/s per company on average, with bursts past the
# default 50/s; the limiter still runs (and is paid for) on every request.
set -euo pipefail
source "$(dirname "$0")/common.sh"
root=$(repo_root)
cd "$root"
source scripts/citus/nodes.sh
require cargo "install Rust (https://rustup.rs)"
require python3 "install Python 3"
require psql "install PostgreSQL 15 (Debian: apt-get install postgresql)"
require pgbench "install PostgreSQL 15's client tools (Debian: apt-get install postgresql-contrib)"
if ! command -v wrk >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y wrk >/dev/null 2>&1; }
  fi
  require wrk "install wrk (Debian: apt-get install wrk)"
fi

seconds=${BENCH_SECONDS:-5}
loadgen_seconds=${BENCH_LOADGEN_SECONDS:-3}
loadgen_fraction=${BENCH_LOADGEN_FRACTION:-0.25}
# loadgen's 16 blocking connections sustain ~20,000 req/s on these 2 cores against a server that
# does nothing (measured: p50 0.13 ms at 20,000/s, 0.5 s at 30,000/s: the generator itself falls
# behind); with the service sharing the cores, 10,000/s keeps the figure the service's, not the
# generator's.
loadgen_max_rate=${BENCH_LOADGEN_MAX_RATE:-10000}
rounds=${BENCH_ROUNDS:-2}
conns=${BENCH_CONNECTIONS:-16}
threads=${BENCH_THREADS:-2}
started_at=$(date +%s)

out=$root/target/bench
work=$out/run
rm -rf "$work"; mkdir -p "$work"
chmod 755 "$out" "$work"
results=$out/results.tsv
printf 'scenario\tround\ttool\trequests\tseconds\tunexpected\tsocket_errors\tp50_us\tp99_us\tapp_cpu_s\tpg_cpu_s\tpeak_rss_kb\trate\tachieved_rate\tgenerator_bound\tstepped_down\n' > "$results"

dir=$(cluster_dir "bench-$$")
sim_pid=""; api_pid=""; c15t_pid=""; bg_pids=""
citus=""; citus_dir=""; citus_api_pid=""
if [ "${BENCH_CITUS:-0}" = 1 ]; then
  citus_available || { echo "error: BENCH_CITUS=1 needs Citus for PostgreSQL 15 (citus.so in pg_config --pkglibdir)" >&2; exit 1; }
  citus=1; citus_dir=$(cluster_dir "bench-citus-$$")
fi
citus_nodes=(coord w1 w2)
cleanup() {
  [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null || true
  [ -n "$citus_api_pid" ] && kill "$citus_api_pid" 2>/dev/null || true
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  [ -n "$c15t_pid" ] && kill "$c15t_pid" 2>/dev/null || true
  # Background jobs still running (an interrupted run): each is its own process group (setsid).
  local p; for p in $bg_pids; do kill -- "-$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  scripts/pg.sh stop "$dir" 2>/dev/null || true; rm -rf "$dir"
  if [ -n "$citus_dir" ]; then
    local n; for n in "${citus_nodes[@]}"; do scripts/pg.sh stop "$citus_dir/$n" >/dev/null 2>&1 || true; done
    rm -rf "$citus_dir"
  fi
}
trap cleanup EXIT

# In the background while cargo builds: each job in its own process group, so cleanup can stop it.
# background VAR COMMAND...: starts COMMAND, its pid in VAR.
background() { local var=$1; shift; setsid "$@" & bg_pids="$bg_pids $!"; printf -v "$var" %s "$!"; }
# reap PID: waits for a background job, then forgets it (cleanup must not signal a reused pid).
reap() {
  local rc=0 p keep=""
  wait "$1" || rc=$?
  for p in $bg_pids; do [ "$p" = "$1" ] || keep="$keep $p"; done
  bg_pids=$keep
  return "$rc"
}
echo "== building (release); in the background meanwhile: data set, PostgreSQL, c15t install"
background gen_pid env BENCH_SHUFFLE="${BENCH_SHUFFLE:-0}" python3 scripts/bench/gen_data.py "$work" 1000 100 100000 > "$work/gen_data.out" 2>&1
background pg_start_pid scripts/pg.sh start "$dir" > "$work/pg.url" 2> "$work/pg.err"
c15t_install_pid=""
if [ "${BENCH_C15T:-1}" = 1 ]; then
  background c15t_install_pid bash scripts/bench/c15t.sh install > "$work/c15t-install.log" 2>&1
fi
citus_start_pid=""
if [ -n "$citus" ]; then
  background citus_start_pid bash -c 'source scripts/common.sh; source scripts/citus/nodes.sh
    for n in coord w1 w2; do citus_node "$1/$n" > "$2/citus-$n.url" || exit 1; done' _ "$citus_dir" "$work" 2> "$work/citus.err"
fi
build_started=$(date +%s)
cargo build --release --bins --quiet
build_s=$(( $(date +%s) - build_started ))
echo "release build: ${build_s} s"
bin=${CARGO_TARGET_DIR:-$root/target}/release

echo "== PostgreSQL, data set"
reap "$gen_pid" || { echo "error: gen_data.py failed: $(tail -1 "$work/gen_data.out")" >&2; exit 1; }
cat "$work/gen_data.out"
reap "$pg_start_pid" || { echo "error: PostgreSQL did not start: $(cat "$work/pg.err")" >&2; exit 1; }
admin=$(cat "$work/pg.url")
db_url="${admin%/postgres}/consent_bench"
psql "$admin" -qc "CREATE DATABASE consent_bench" >/dev/null
chmod 644 "$work"/*

export APP_ENV=development
# As deployed (docs/security.md, "Least privilege"): the owner migrates and grants, the service
# runs as a role that owns nothing and writes the evidence through the owner's functions.
psql "$admin" -qc "DO \$\$ BEGIN CREATE ROLE consent_app LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$"
export APP__DATABASE__MIGRATION_URL="$db_url"
export APP__DATABASE__URL="${db_url/postgres@/consent_app@}"
export APP__LOG__FORMAT=json APP__LOG__LEVEL=info
export APP__SERVER__HOST=127.0.0.1 APP__SERVER__PORT=0
# The workers would poll the PGCC for the 100,000 loaded requests: not what is measured here.
export APP__WORKERS__RUN_IN_SERVE=false
# loadgen sends one company's key per run (see the header): the per-company rate limit must not answer
# 429. Raised, not turned off, so that every request still pays the limiter's check.
export APP__RATE_LIMIT__PER_SECOND=1000000 APP__RATE_LIMIT__BURST=1000000
"$bin/consent-api" migrate >/dev/null 2>&1
t0=$(date +%s)
sed "s|@DIR@|$work|g" scripts/bench/load.sql | psql "$db_url" -q -v ON_ERROR_STOP=1
# pg_create_inflight's in-flight table: the consent table's columns and checks, its primary key only.
# Keyed as the consent table is, (empresa_id, id) (issue 23): the script's ON CONFLICT names that key.
psql "$db_url" -qc "CREATE TABLE bench_em_andamento (LIKE solicitacoes_consentimento INCLUDING DEFAULTS INCLUDING CONSTRAINTS, PRIMARY KEY (empresa_id, id))"
echo "loaded in $(( $(date +%s) - t0 )) s: $(psql "$db_url" -tAc "SELECT (SELECT count(*) FROM empresas) || ' companies, ' || (SELECT count(*) FROM casos_de_uso) || ' use cases, ' || (SELECT count(*) FROM solicitacoes_consentimento) || ' consent requests'")"
citus_db=""
if [ -n "$citus" ]; then
  echo "== Citus: coordinator and two workers, the same data set distributed"
  reap "$citus_start_pid" || { echo "error: the Citus nodes did not start: $(cat "$work/citus.err")" >&2; exit 1; }
  citus_db=$(citus_database consent_bench "$(cat "$work/citus-coord.url")" "$(cat "$work/citus-w1.url")" "$(cat "$work/citus-w2.url")") \
    || { echo "error: the Citus database could not be made" >&2; exit 1; }
  t0=$(date +%s)
  APP__DATABASE__URL="$citus_db" APP__DATABASE__MIGRATION_URL="$citus_db" "$bin/consent-api" migrate >/dev/null 2>&1
  PGOPTIONS="-c citus.shard_count=${BENCH_CITUS_SHARDS:-32}" psql "$citus_db" -qX -v ON_ERROR_STOP=1 -f scripts/citus/distribute.sql >/dev/null
  sed "s|@DIR@|$work|g" scripts/bench/load.sql | psql "$citus_db" -q -v ON_ERROR_STOP=1
  echo "distributed and loaded in $(( $(date +%s) - t0 )) s: $(psql "$citus_db" -tAc "SELECT (SELECT count(*) FROM solicitacoes_consentimento) || ' consent requests in ' || (SELECT count(*) FROM pg_dist_shard) || ' shards'")"
fi

wait_line() {
  local file=$1 prefix=$2 i
  for i in $(seq 1 300); do
    if grep -q "^$prefix" "$file" 2>/dev/null; then grep -m1 "^$prefix" "$file" | sed "s|^$prefix||"; return 0; fi
    sleep 0.1
  done
  echo "error: '$prefix' never printed; see $file" >&2; exit 1
}

echo "== pgcc-sim, consent-api"
"$bin/pgcc-sim" --port 0 --seed "$work/seed.json" > "$work/sim.out" 2> "$work/pgcc-sim.log" &
sim_pid=$!
sim_url=$(wait_line "$work/sim.out" "pgcc-sim listening on ")
export APP__PGCC__BASE_URL="$sim_url"
"$bin/consent-api" serve > "$work/api.out" 2> "$work/consent-api.log" &
api_pid=$!
api_url=$(wait_line "$work/api.out" "consent-api listening on ")
pg_pid=$(head -1 "$dir/data/postmaster.pid")
citus_url=""; citus_pg_pids=""
if [ -n "$citus" ]; then
  APP__DATABASE__URL="$citus_db" APP__DATABASE__MIGRATION_URL="$citus_db" "$bin/consent-api" serve > "$work/api-citus.out" 2> "$work/consent-api-citus.log" &
  citus_api_pid=$!
  citus_url=$(wait_line "$work/api-citus.out" "consent-api listening on ")
  for n in "${citus_nodes[@]}"; do citus_pg_pids="$citus_pg_pids $(head -1 "$citus_dir/$n/data/postmaster.pid")"; done
fi

# Pre-flight: each scenario's request answers 200 once, or the run stops here.
key1=$(head -1 "$work/keys.txt"); cpf1=$(head -1 "$work/cpfs.txt")
preflight() {
  local name=$1 code; shift
  code=$(curl -s -o "$work/preflight-$name.json" -w '%{http_code}' "$@")
  [ "$code" = 200 ] || { echo "error: pre-flight $name answered $code: $(head -c 400 "$work/preflight-$name.json")" >&2; exit 1; }
}
preflight list -H "Api-Key: $key1" "$api_url/api/casos-de-uso"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["data"]; assert len(d)==100, len(d)' "$work/preflight-list.json"
preflight create_ativo -H "Api-Key: $key1" -H 'Content-Type: application/json' "$api_url/api/solicitacao-consentimento/criar/ativo" \
  -d "{\"casoDeUsoIdTemplate\":\"tpl-0000-001\",\"cpfTitular\":\"$cpf1\",\"modalidadeAcesso\":\"Direto\",\"tipoTitular\":\"PessoaFisica\",\"dataExpiracaoConsentimento\":\"2030-12-31T23:59:59Z\",\"dataTitularRespondeuConsentimento\":\"2026-01-10T12:00:00Z\",\"provaColeta\":\"assinatura:bench\"}"
preflight create_pendente -H "Api-Key: $key1" -H 'Content-Type: application/json' "$api_url/api/solicitacao-consentimento/criar/pendente" \
  -d "{\"casoDeUsoIdTemplate\":\"tpl-0000-002\",\"cpfTitular\":\"$cpf1\",\"modalidadeAcesso\":\"Direto\",\"tipoTitular\":\"PessoaFisica\",\"dataExpiracaoConsentimento\":\"2030-12-31T23:59:59Z\"}"
IFS=$'\t' read -r hn hcpf htpl < "$work/hash_inputs.txt"
preflight hash -H "Api-Key: $(sed -n "${hn}p" "$work/keys.txt")" -H 'Content-Type: application/json' "$api_url/api/hash-consulta" \
  -d "{\"cpfTitular\":\"$hcpf\",\"casoDeUsoIdTemplate\":\"$htpl\"}"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["data"]["valido"] is True' "$work/preflight-hash.json"
preflight health "$api_url/health/live"
if [ -n "$citus" ]; then
  preflight list_citus -H "Api-Key: $key1" "$citus_url/api/casos-de-uso"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["data"]; assert len(d)==100, len(d)' "$work/preflight-list_citus.json"
fi

scenarios=${BENCH_ONLY:-"list list_etag create_ativo create_pendente pgcc_direct hash health pg_list pg_key_list pg_create pg_create_inflight c15t_record c15t_read"}
if [ -n "$citus" ]; then
  # each HTTP scenario the Citus run covers, right after its one-node run
  with_citus=""
  for s in $scenarios; do
    with_citus="$with_citus $s"
    case $s in list|create_ativo|create_pendente|hash) with_citus="$with_citus $s@citus" ;; esac
  done
  scenarios=$with_citus
fi
# list_etag needs the service's ETag support: without an ETag header on the list, it is skipped.
etag_note=""
if [[ " $scenarios " == *" list_etag "* ]]; then
  etag=$(curl -s -D - -o /dev/null -H "Api-Key: $key1" "$api_url/api/casos-de-uso" | tr -d '\r' \
    | awk 'tolower($1) == "etag:" { sub(/^[^:]*:[ \t]*/, ""); print; exit }')
  if [ -z "$etag" ]; then
    etag_note="the list answer has no ETag header: the service does not support If-None-Match yet"
  else
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Api-Key: $key1" -H "If-None-Match: $etag" "$api_url/api/casos-de-uso")
    if [ "$code" != 304 ]; then
      etag_note="If-None-Match with the list's own ETag answered $code, not 304"
    elif ! python3 scripts/bench/etags.py "$api_url" "$work/keys.txt" "$work/etags.txt" 2> "$work/etags.err"; then
      etag_note="fetching each key's ETag failed: $(tail -1 "$work/etags.err")"
    fi
  fi
  [ -n "$etag_note" ] && echo "list_etag: skipped ($etag_note)"
fi

c15t_url=""; c15t_note="not run (BENCH_C15T=0)"
if [ "${BENCH_C15T:-1}" = 1 ]; then
  echo "== c15t (time-boxed)"
  reap "$c15t_install_pid" || true  # its failure, if any, shows again in c15t.sh start
  c15t_status=0
  c15t_url=$(C15T_DB_URL="$db_url" C15T_WORK="$work" bash scripts/bench/c15t.sh start 2> "$work/c15t-setup.log") || c15t_status=$?
  if [ "$c15t_status" -eq 0 ] && [ -n "$c15t_url" ]; then
    c15t_pid=$(cat "$work/c15t.pid"); c15t_note="measured"
  else
    c15t_note=$(tail -1 "$work/c15t-setup.log" 2>/dev/null || echo "setup failed")
    echo "c15t: not measured ($c15t_note)"
    c15t_url=""
  fi
fi

loadgen=""; loadgen_note="not run (BENCH_LOADGEN=0)"
if [ "${BENCH_LOADGEN:-1}" = 1 ]; then
  # built with the service (crates/loadgen): open loop, coordinated omission corrected
  loadgen=$bin/loadgen
  loadgen_note="loadgen (crates/loadgen: fixed schedule, latency from each request's due time)"
fi

ticks=$(getconf CLK_TCK)
proc_cpu() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# The whole cluster: the postmaster, its live backends, and the backends already gone (cutime);
# of a Citus run ($BENCH_PG_PIDS), the three nodes'.
pg_cpu() {
  local total=0 child postmaster
  for postmaster in ${BENCH_PG_PIDS:-$pg_pid}; do
    total=$((total + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$postmaster/stat")))
    for child in $(pgrep -P "$postmaster"); do total=$((total + $(proc_cpu "$child"))); done
  done
  echo "$total"
}
reset_hwm() { echo 5 > "/proc/$1/clear_refs" 2>/dev/null || true; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# measure NAME ROUND APP_PID KIND ARGS...: one timed run, one line of results.tsv. KIND: wrk,
# loadgen (at $BENCH_RATE requests/s) or pgbench. $BENCH_EXPECT: the one status that counts as success.
measure() {
  local name=$1 round=$2 app=$3 kind=$4; shift 4
  local a0=0 a1=0 p0 p1 log="$work/$name-$round.$kind.out" dur=$seconds
  [ "$kind" = loadgen ] && dur=$loadgen_seconds
  [ "$app" != - ] && { reset_hwm "$app"; a0=$(proc_cpu "$app"); }
  p0=$(pg_cpu)
  local perf_pid=""
  if [ -n "${BENCH_PERF:-}" ] && [ "$app" != - ] && command -v perf >/dev/null; then
    perf record -q -F 499 -g -p "$app" -o "$work/perf-$name-$round-$kind.data" -- sleep "$dur" >/dev/null 2>&1 &
    perf_pid=$!
  fi
  if [ "$kind" = wrk ]; then
    timeout $((seconds + 30)) wrk -t"$threads" -c"$conns" -d"${seconds}s" --timeout 5s "$@" > "$log" 2>&1 || true
  elif [ "$kind" = loadgen ]; then
    timeout $((loadgen_seconds + 30)) "$loadgen" --seconds "$loadgen_seconds" --connections "$conns" --rate "$BENCH_RATE" \
      --timeout 5 --out "$log" "$@" > "$log.err" 2>&1 || true
  else
    rm -f "$work/pgb-$name-$round".*
    timeout $((seconds + 30)) pgbench -n -M prepared -c "$conns" -j "$threads" -T "$seconds" \
      -l --log-prefix="$work/pgb-$name-$round" "$@" > "$log" 2>&1 || true
  fi
  p1=$(pg_cpu)
  [ -n "$perf_pid" ] && { wait "$perf_pid" || true; }
  local rss=0
  [ "$app" != - ] && { a1=$(proc_cpu "$app"); rss=$(hwm_kb "$app"); }
  python3 scripts/bench/parse.py "$kind" "$name" "$round" "$log" "$work/pgb-$name-$round" \
    "$(awk -v a="$a0" -v b="$a1" -v t="$ticks" 'BEGIN{printf "%.2f", (b-a)/t}')" \
    "$(awk -v a="$p0" -v b="$p1" -v t="$ticks" 'BEGIN{printf "%.2f", (b-a)/t}')" "$rss" "$dur" \
    "${BENCH_RATE:-}" "${BENCH_EXPECT:-}" >> "$results"
  # A generator-bound loadgen run (behind its schedule by more than 5% even at its last, lower
  # rate) prints no latency: it would be the generator's own queue, not the service's.
  tail -1 "$results" | awk -F'\t' '{
    lat = ($15 == 1) ? sprintf("generator-bound at %s/s (achieved %s/s): no p50/p99", $13, $14) \
      : sprintf("p50 %6.2f ms  p99 %7.2f ms", $8/1000, $9/1000)
    if ($3 == "loadgen") lat = lat sprintf("  rate %s/s%s", $13, ($16 > 0 ? " (" $16 " generator-bound attempt(s) at higher rates)" : ""))
    printf "  %-16s round %s %-7s %8.0f req/s  %s  unexpected %s  socket errors %s\n", $1, $2, $3, ($5 > 0 ? $4/$5 : 0), lat, $6, $7}'
}

# http NAME APP_PID BASE_URL METHOD PATH: the wrk run (scripts/bench/$BENCH_LUA.lua, default NAME),
# then, with loadgen, the open-loop run: same kind of request (scripts/bench/loadgen_inputs.py) at
# loadgen_fraction x the req/s wrk just measured (pgcc_direct: at the creations' loadgen rate, below).
http() {
  local name=$1 app=$2 base=$3 method=$4 path=$5
  local kind=${name%@citus}  # a Citus run sends the same requests as its one-node run
  measure "$name" "$round" "$app" wrk -s "scripts/bench/${BENCH_LUA:-$kind}.lua" "$base"
  [ -n "$loadgen" ] || return 0
  local rate input=$work/loadgen-$name-$round.in
  rate=$(awk -F'\t' -v s="$name" -v r="$round" -v f="$loadgen_fraction" -v m="$loadgen_max_rate" \
    '$1 == s && $2 == r && $3 == "wrk" && $5 > 0 { q = int($4 / $5 * f) } END { if (q > m) q = m; print (q >= 1 ? q : 1) }' "$results")
  # pgcc_direct: at the rate of this round's create_ativo (else create_pendente) loadgen run when there
  # is one, so that "creation p50 - PGCC round-trip p50" compares the two at the same load.
  if [ "$name" = pgcc_direct ]; then
    rate=$(awk -F'\t' -v r="$round" -v q="$rate" '$2 == r && $3 == "loadgen" && $13 > 0 && !c[$1] &&
      ($1 == "create_ativo" || $1 == "create_pendente") { c[$1] = $13 } END { print (c["create_ativo"] ? c["create_ativo"] : (c["create_pendente"] ? c["create_pendente"] : q)) }' "$results")
  fi
  local args=(--method "$method")
  mapfile -t inputs < <(python3 scripts/bench/loadgen_inputs.py "$kind" "$work" "$input" $((rate * loadgen_seconds)) "$base")
  args+=("${inputs[@]}")
  [ "$name" = c15t_read ] || args+=("$base$path")
  BENCH_RATE=$rate measure "$name" "$round" "$app" loadgen "${args[@]}"
}

export BENCH_DIR=$work BENCH_SCRIPTS=$root/scripts/bench
echo "== load: $rounds round(s); per scenario wrk/pgbench ${seconds} s$([ -n "$loadgen" ] && echo ", then loadgen ${loadgen_seconds} s at $loadgen_fraction x wrk's req/s"); $conns connections, $threads load threads"
for round in $(seq 1 "$rounds"); do
  for s in $scenarios; do
    case $s in
      list) http list "$api_pid" "$api_url" GET /api/casos-de-uso ;;
      list_etag) if [ -z "$etag_note" ]; then BENCH_EXPECT=304 http list_etag "$api_pid" "$api_url" GET /api/casos-de-uso; fi ;;
      create_ativo) BENCH_LUA=create BENCH_MODE=ativo http create_ativo "$api_pid" "$api_url" POST /api/solicitacao-consentimento/criar/ativo ;;
      create_pendente) BENCH_LUA=create BENCH_MODE=pendente http create_pendente "$api_pid" "$api_url" POST /api/solicitacao-consentimento/criar/pendente ;;
      pgcc_direct) http pgcc_direct "$sim_pid" "$sim_url" POST /pgcc/v1/solicitacoes ;;
      hash) http hash "$api_pid" "$api_url" POST /api/hash-consulta ;;
      health) http health "$api_pid" "$api_url" GET /health/live ;;
      pg_list) measure pg_list "$round" - pgbench -f scripts/bench/pgbench_list.sql "$db_url" ;;
      pg_key_list) measure pg_key_list "$round" - pgbench -f scripts/bench/pgbench_key_list.sql "$db_url" ;;
      pg_status_claim) measure pg_status_claim "$round" - pgbench -D now=2100-01-01 -D next=2099-06-01 -f scripts/bench/pgbench_status_claim.sql "$db_url" ;;
      pg_create|pg_create_inflight)
        measure "$s" "$round" - pgbench -r -D companies=1000 -D use_cases=100 -f "scripts/bench/pgbench_${s#pg_}.sql" "$db_url"
        # the same run less its prelude SELECT (the binds): the statements' own rate, estimated
        python3 scripts/bench/net_of_prelude.py "$results" "$s" "$round" "$work/$s-$round.pgbench.out" >> "$results" ;;
      c15t_record) if [ -n "$c15t_url" ]; then http c15t_record "$c15t_pid" "$c15t_url" POST /subjects; fi ;;
      c15t_read) if [ -n "$c15t_url" ]; then http c15t_read "$c15t_pid" "$c15t_url" GET /subjects; fi ;;
      list@citus) BENCH_PG_PIDS=$citus_pg_pids http "$s" "$citus_api_pid" "$citus_url" GET /api/casos-de-uso ;;
      create_ativo@citus) BENCH_PG_PIDS=$citus_pg_pids BENCH_LUA=create BENCH_MODE=ativo http "$s" "$citus_api_pid" "$citus_url" POST /api/solicitacao-consentimento/criar/ativo ;;
      create_pendente@citus) BENCH_PG_PIDS=$citus_pg_pids BENCH_LUA=create BENCH_MODE=pendente http "$s" "$citus_api_pid" "$citus_url" POST /api/solicitacao-consentimento/criar/pendente ;;
      hash@citus) BENCH_PG_PIDS=$citus_pg_pids http "$s" "$citus_api_pid" "$citus_url" POST /api/hash-consulta ;;
      *) echo "unknown scenario '$s' (BENCH_ONLY)" >&2 ;;
    esac
  done
done

# HOT updates: how many of the consent table's updates (the creation's confirmation, mostly) were
# heap-only (no index entry written), a lever of issue 15 (fillfactor).
psql "$db_url" -Atc "SELECT 'consent table updates: ' || n_tup_upd || ', HOT: ' || n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'solicitacoes_consentimento'" || true
echo "== report"
# A partial or profiled run prints its table but leaves docs/performance.md alone.
doc=$root/docs/performance.md
[ -n "${BENCH_ONLY:-}${BENCH_PERF:-}" ] && doc=-
python3 scripts/bench/report.py "$results" "$doc" \
  --seconds "$seconds" --rounds "$rounds" --connections "$conns" --threads "$threads" \
  --c15t "$c15t_note" --elapsed "$(( $(date +%s) - started_at ))" --build "$build_s" \
  --loadgen "$loadgen_note" --loadgen-seconds "$loadgen_seconds" --loadgen-fraction "$loadgen_fraction" --etag "$etag_note" \
  --shuffle "${BENCH_SHUFFLE:-0}"
where="table in docs/performance.md"
[ "$doc" = - ] && where="table printed above, docs/performance.md left alone (BENCH_ONLY/BENCH_PERF)"
echo "bench done in $(( $(date +%s) - started_at )) s (release build ${build_s} s); $where; raw lines in $results"
