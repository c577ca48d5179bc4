#!/usr/bin/env bash
# `make bench-scale`: cost curves. One throw-away PostgreSQL, the PGCC simulator and a release
# build of consent-api; the consent requests grow through BENCH_SCALE_SIZES (default 10^5, 10^6,
# 10^7), each step loaded with COPY (scripts/bench/scale_load.sql: gen_scale.py streamed, indexes
# built after, history derived), and at each size:
#
#   create_ativo  POST .../criar/ativo, simulator answering
#   hash          POST /api/hash-consulta on active requests sampled from the table
#   get           GET /api/solicitacao-consentimento/{id}, ids sampled from the table
#   list_status   GET /api/solicitacao-consentimento?status=ativo (first page), random company
#   list          GET /api/casos-de-uso, random company
#
# each as in `make bench`: wrk (closed loop: req/s), then loadgen (open loop: p50/p99, at
# BENCH_LOADGEN_FRACTION of wrk's req/s; a run that cannot keep its schedule is generator-bound
# and tried lower), then the size of each table and index. BENCH_SCALE_COMPANIES companies (10,000)
# with BENCH_SCALE_USE_CASES use cases each (20) from the first size on: the requests per company
# grow with the size (10 at 10^5, 1,000 at 10^7). Results: target/bench-scale/results.tsv,
# sizes.tsv, and the table between the bench-scale markers of docs/performance.md (printed only
# when BENCH_SCALE_SIZES or BENCH_ONLY is set). Knobs as `make bench`: BENCH_SECONDS (5),
# BENCH_LOADGEN_SECONDS (3), BENCH_LOADGEN_FRACTION (0.25), BENCH_LOADGEN_MAX_RATE (10000),
# BENCH_CONNECTIONS (16), BENCH_THREADS (2), BENCH_ONLY (scenario names).
# At BENCH_SCALE_MIGRATE_SIZE (10^6) it also runs `consent-api migrate` over the salt's migrations
# and backfill while a reader runs, and reports the longest read wait (scripts/bench/migrate_live.sh).
# Then the background work at each size (status_work.sh, delivery_claim.sh: see below).
# Disk: about 9 GB at 10^7 (check `df -h`); the cluster is removed at the end, whatever happens.
# Not part of `make test` nor CI. Everything listens on 127.0.0.1.
set -euo pipefail
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/bench/measure.sh"
root=$(repo_root)
cd "$root"
require cargo "install Rust (https://rustup.rs)"
require python3 "install Python 3"
require psql "install PostgreSQL 15 (Debian: apt-get install postgresql)"
require wrk "install wrk (Debian: apt-get install wrk)"

sizes=${BENCH_SCALE_SIZES:-"100000 1000000 10000000"}
companies=${BENCH_SCALE_COMPANIES:-10000}
use_cases=${BENCH_SCALE_USE_CASES:-20}
seconds=${BENCH_SECONDS:-5}
loadgen_seconds=${BENCH_LOADGEN_SECONDS:-3}
loadgen_fraction=${BENCH_LOADGEN_FRACTION:-0.25}
loadgen_max_rate=${BENCH_LOADGEN_MAX_RATE:-10000}
conns=${BENCH_CONNECTIONS:-16}
threads=${BENCH_THREADS:-2}
scenarios=${BENCH_ONLY:-"create_ativo hash get list_status list"}
migrate_size=${BENCH_SCALE_MIGRATE_SIZE:-1000000}
started_at=$(date +%s)

out=$root/target/bench-scale
work=$out/run
rm -rf "$work"; mkdir -p "$work"
chmod 755 "$out" "$work"
results=$out/results.tsv
sizes_tsv=$out/sizes.tsv
printf 'size\tscenario\tround\ttool\trequests\tseconds\tunexpected\tsocket_errors\tp50_us\tp99_us\tapp_cpu_s\tpg_cpu_s\tpeak_rss_kb\trate\tachieved_rate\tgenerator_bound\tstepped_down\n' > "$results"
printf 'size\trelation\tkind\ttable\tbytes\trows\n' > "$sizes_tsv"

dir=$(cluster_dir "bench-scale-$$")
sim_pid=""; api_pid=""
cleanup() {
  [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null || true
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  scripts/pg.sh stop "$dir" 2>/dev/null || true; rm -rf "$dir"
}
trap cleanup EXIT

echo "== building (release), data set of $companies companies x $use_cases use cases, PostgreSQL"
python3 scripts/bench/gen_data.py "$work" "$companies" "$use_cases" 0 > "$work/gen_data.out"
scripts/pg.sh start "$dir" > "$work/pg.url"
cargo build --release --bins --quiet
bin=${CARGO_TARGET_DIR:-$root/target}/release
admin=$(cat "$work/pg.url")
db_url="${admin%/postgres}/consent_bench"
psql "$admin" -qc "CREATE DATABASE consent_bench" >/dev/null
# Fewer checkpoints while GBs of WAL go by during the loads (not more than 2 GB of WAL kept: disk).
psql "$admin" -qc "ALTER SYSTEM SET max_wal_size = '2GB'" -c "ALTER SYSTEM SET checkpoint_timeout = '15min'" -c "SELECT pg_reload_conf()" >/dev/null
chmod 644 "$work"/*

export APP_ENV=development
export APP__DATABASE__URL="$db_url"
export APP__LOG__FORMAT=json APP__LOG__LEVEL=info
export APP__SERVER__HOST=127.0.0.1 APP__SERVER__PORT=0
export APP__WORKERS__RUN_IN_SERVE=false
export APP__RATE_LIMIT__PER_SECOND=1000000 APP__RATE_LIMIT__BURST=1000000
"$bin/consent-api" migrate >/dev/null 2>&1
sed "s|@DIR@|$work|g" scripts/bench/load.sql | psql "$db_url" -q -v ON_ERROR_STOP=1

"$bin/pgcc-sim" --port 0 --seed "$work/seed.json" > "$work/sim.out" 2> "$work/pgcc-sim.log" &
sim_pid=$!
sim_url=$(wait_line "$work/sim.out" "pgcc-sim listening on ")
export APP__PGCC__BASE_URL="$sim_url"
start_api() {
  "$bin/consent-api" serve > "$work/api.out" 2> "$work/consent-api.log" &
  api_pid=$!
  api_url=$(wait_line "$work/api.out" "consent-api listening on ")
}
pg_pid=$(head -1 "$dir/data/postmaster.pid")
ticks=$(getconf CLK_TCK)

# measure SIZE NAME KIND ARGS...: one run (wrk or loadgen at $BENCH_RATE), one line of results.tsv.
measure() {
  local size=$1 name=$2 kind=$3; shift 3
  local log dur=$seconds a0 a1 p0 p1
  log="$work/$name-$size.$kind.out"
  [ "$kind" = loadgen ] && dur=$loadgen_seconds
  a0=$(proc_cpu "$api_pid"); p0=$(pg_cpu)
  if [ "$kind" = wrk ]; then
    timeout $((seconds + 30)) wrk -t"$threads" -c"$conns" -d"${seconds}s" --timeout 5s "$@" > "$log" 2>&1 || true
  else
    timeout $((loadgen_seconds * 3 + 60)) "$bin/loadgen" --seconds "$loadgen_seconds" --connections "$conns" --rate "$BENCH_RATE" \
      --timeout 5 --out "$log" "$@" > "$log.err" 2>&1 || true
  fi
  a1=$(proc_cpu "$api_pid"); p1=$(pg_cpu)
  python3 scripts/bench/parse.py "$kind" "$name" 1 "$log" - \
    "$(awk -v a="$a0" -v b="$a1" -v t="$ticks" 'BEGIN{printf "%.2f", (b-a)/t}')" \
    "$(awk -v a="$p0" -v b="$p1" -v t="$ticks" 'BEGIN{printf "%.2f", (b-a)/t}')" 0 "$dur" "${BENCH_RATE:-}" "" \
    | sed "s|^|$size\t|" >> "$results"
  tail -1 "$results" | awk -F'\t' '{
    lat = ($16 == 1) ? "generator-bound: no p50/p99" : sprintf("p50 %6.2f ms  p99 %7.2f ms", $9/1000, $10/1000)
    printf "  %-12s %-8s %-7s %8.0f req/s  %s  errors %d\n", $1, $2, $4, ($6 > 0 ? $5/$6 : 0), lat, $7 + $8}'
}

# http SIZE NAME LUA METHOD PATH: wrk, then loadgen at loadgen_fraction x wrk's req/s.
http() {
  local size=$1 name=$2 lua=$3 method=$4 path=$5 rate input
  input=$work/loadgen-$name-$size.in
  measure "$size" "$name" wrk -s "scripts/bench/$lua.lua" "$api_url"
  rate=$(awk -F'\t' -v z="$size" -v s="$name" -v f="$loadgen_fraction" -v m="$loadgen_max_rate" \
    '$1 == z && $2 == s && $4 == "wrk" && $6 > 0 { q = int($5 / $6 * f) } END { if (q > m) q = m; print (q >= 1 ? q : 1) }' "$results")
  local args=(--method "$method")
  mapfile -t inputs < <(python3 scripts/bench/loadgen_inputs.py "$name" "$work" "$input" $((rate * loadgen_seconds)) "$api_url")
  args+=("${inputs[@]}" "$api_url$path")
  BENCH_RATE=$rate measure "$size" "$name" loadgen "${args[@]}"
}

export BENCH_DIR=$work BENCH_SCRIPTS=$root/scripts/bench BENCH_USE_CASES=$use_cases
base=2025-01-01T00:00:00Z
loaded=0
for size in $sizes; do
  if [ "$size" -gt "$loaded" ]; then
    echo "== loading $((size - loaded)) consent requests (to $size)"
    t0=$(date +%s)
    sed -e "s|@GEN@|$root/scripts/bench/gen_scale.py|" -e "s|@COMPANIES@|$companies|" -e "s|@PER_COMPANY@|$use_cases|" \
      -e "s|@START@|$loaded|g" -e "s|@COUNT@|$((size - loaded))|" -e "s|@BASE@|$base|g" scripts/bench/scale_load.sql \
      | psql "$db_url" -q -v ON_ERROR_STOP=1 > "$work/load-$size.out"
    loaded=$size
    echo "loaded in $(( $(date +%s) - t0 )) s; disk: $(df -h --output=avail "$dir" | tail -1 | tr -d ' ') free"
  fi
  # The read inputs, sampled from what is loaded now: ids spread over the whole table, and the
  # (company, CPF, template) of active requests for HashConsulta: about 20,000 of each, from pages
  # picked at random over the whole table (TABLESAMPLE SYSTEM at the percentage that gives them).
  pct=$(awk -v n="$size" 'BEGIN { p = 40000 * 100 / n; if (p > 100) p = 100; printf "%.4f", p }')
  psql "$db_url" -qAtF $'\t' -c "SELECT substr(empresa_id::text, 25)::int, id FROM solicitacoes_consentimento TABLESAMPLE SYSTEM ($pct) WHERE criacao = 'confirmada' LIMIT 20000" > "$work/requests.txt"
  psql "$db_url" -qAtF $'\t' -c "SELECT substr(empresa_id::text, 25)::int, cpf_titular, caso_de_uso_id_template FROM solicitacoes_consentimento TABLESAMPLE SYSTEM ($pct) WHERE status = 'ativo' AND criacao = 'confirmada' AND data_expiracao_consentimento > now() LIMIT 20000" > "$work/hash_inputs.txt"
  # A fresh service per size: its caches start cold alike, then the runs warm them.
  [ -n "$api_pid" ] && { kill "$api_pid"; wait "$api_pid" 2>/dev/null || true; api_pid=""; }
  start_api
  echo "== size $size: $(wc -l < "$work/requests.txt") sampled ids, $(wc -l < "$work/hash_inputs.txt") HashConsulta inputs"
  for s in $scenarios; do
    case $s in
      create_ativo) BENCH_MODE=ativo http "$size" create_ativo create POST /api/solicitacao-consentimento/criar/ativo ;;
      hash) http "$size" hash hash POST /api/hash-consulta ;;
      get) http "$size" get get GET /api/solicitacao-consentimento ;;
      list_status) http "$size" list_status list_status GET "/api/solicitacao-consentimento?status=ativo" ;;
      list) http "$size" list list GET /api/casos-de-uso ;;
      *) echo "unknown scenario '$s' (BENCH_ONLY)" >&2 ;;
    esac
  done
  # `migrate` of the salt's migrations and backfill over the whole table while a reader runs
  # (scripts/bench/migrate_live.sh): the longest read wait, in target/bench-scale/migrate_live.tsv.
  if [ "$size" = "$migrate_size" ]; then
    echo "== size $size: migrate while reading"
    scripts/bench/migrate_live.sh "$db_url" "$bin/consent-api" "$out"
  fi
  psql "$db_url" -qc "ANALYZE"
  psql "$db_url" -qAtF $'\t' -c "
    SELECT $size, c.relname, CASE c.relkind WHEN 'i' THEN 'index' ELSE 'table' END,
           COALESCE(t.relname, c.relname), pg_relation_size(c.oid), CASE WHEN c.relkind = 'r' THEN c.reltuples::bigint END
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i') AND pg_relation_size(c.oid) > 0
    ORDER BY 4, 3 DESC, 5 DESC" >> "$sizes_tsv"
done

# The background work at each size, on clusters of their own (issue 21, part 8): the status
# worker's PostgreSQL CPU with no API traffic and a new request's first check
# (scripts/bench/status_work.sh), and the webhook claim against one company's backlog of 10^3
# and the largest size's due deliveries with another company's delivery wait beside it
# (scripts/bench/delivery_claim.sh). BENCH_SCALE_BACKGROUND=0 skips them.
if [ "${BENCH_SCALE_BACKGROUND:-1}" != 0 ]; then
  echo "== background work: status checks"
  STATUS_WORK_PROFILE=release scripts/bench/status_work.sh $sizes | tee "$out/status_work.tsv"
  echo "== background work: the webhook claim"
  DELIVERY_CLAIM_PROFILE=release scripts/bench/delivery_claim.sh 1000 "${sizes##* }" | tee "$out/delivery_claim.tsv"
fi

echo "== report"
doc=$root/docs/performance.md
[ -n "${BENCH_SCALE_SIZES:-}${BENCH_ONLY:-}" ] && doc=-
python3 scripts/bench/scale_report.py "$results" "$sizes_tsv" "$doc" --companies "$companies" --use-cases "$use_cases" \
  --seconds "$seconds" --loadgen-seconds "$loadgen_seconds" --loadgen-fraction "$loadgen_fraction" --connections "$conns" \
  --elapsed "$(( $(date +%s) - started_at ))"
echo "bench-scale done in $(( $(date +%s) - started_at )) s; raw lines in $results and $sizes_tsv"
