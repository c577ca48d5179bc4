#!/usr/bin/env bash
# `make bench`: a throw-away PostgreSQL, the PGCC simulator and a release build of consent-api,
# a realistic data set loaded with COPY (1,000 companies x 100 use cases, 100,000 consent
# requests, one API key per company), then short load runs, interleaved round by round so that
# drift (CPU frequency, cache, CI neighbours) hits every side alike:
#
#   list         GET /api/casos-de-uso, random company keys             (wrk)
#   create_ativo / create_pendente   POST .../criar/{ativo,pendente}, simulator answering (wrk)
#   pgcc_direct  the simulator's POST /pgcc/v1/solicitacoes alone: the PGCC round trip (wrk)
#   hash         POST /api/hash-consulta on active loaded requests       (wrk)
#   health       GET /health/live: the HTTP stack's limit                (wrk)
#   pg_list      the list query alone                                     (pgbench -M prepared)
#   pg_key_list  the API-key lookup + the list query                      (pgbench -M prepared)
#   c15t_*       @c15t/backend on the same PostgreSQL (scripts/bench/c15t.sh), when it can run
#
# Results: target/bench/results.tsv (one line per scenario and round) and the table between the
# markers of docs/performance.md (the rest of that file is hand-written and kept).
# Knobs: BENCH_SECONDS (10), BENCH_ROUNDS (2), BENCH_CONNECTIONS (16), BENCH_THREADS (2),
# BENCH_C15T (1; 0 skips it), BENCH_ONLY (space-separated scenario names), BENCH_PERF (set: a
# `perf record -g` of the process under test per run, target/bench/run/perf-<scenario>-<round>.data;
# it perturbs the numbers). With BENCH_ONLY or BENCH_PERF the table is printed, not written.
# Not part of `make test` nor CI. Everything listens on 127.0.0.1 and every run is time-bounded.
set -euo pipefail
source "$(dirname "$0")/common.sh"
root=$(repo_root)
cd "$root"
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

seconds=${BENCH_SECONDS:-10}
rounds=${BENCH_ROUNDS:-2}
conns=${BENCH_CONNECTIONS:-16}
threads=${BENCH_THREADS:-2}
started_at=$(date +%s)

echo "== building (release)"
cargo build --release --bins --quiet
bin=$root/target/release

out=$root/target/bench
work=$out/run
rm -rf "$work"; mkdir -p "$work"
chmod 755 "$out" "$work"
results=$out/results.tsv
printf 'scenario\tround\trequests\tseconds\tnon2xx\tsocket_errors\tp50_us\tp99_us\tapp_cpu_s\tpg_cpu_s\tpeak_rss_kb\n' > "$results"

dir=$(cluster_dir "bench-$$")
sim_pid=""; api_pid=""
cleanup() {
  [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null || true
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  [ -n "${c15t_pid:-}" ] && kill "$c15t_pid" 2>/dev/null || true
  scripts/pg.sh stop "$dir"; rm -rf "$dir"
}
trap cleanup EXIT

echo "== PostgreSQL, data set"
admin=$(scripts/pg.sh start "$dir")
db_url="${admin%/postgres}/consent_bench"
psql "$admin" -qc "CREATE DATABASE consent_bench" >/dev/null
python3 scripts/bench/gen_data.py "$work" 1000 100 100000
chmod 644 "$work"/*

export APP_ENV=development
export APP__DATABASE__URL="$db_url"
export APP__LOG__FORMAT=json APP__LOG__LEVEL=info
export APP__SERVER__HOST=127.0.0.1 APP__SERVER__PORT=0
# The workers would poll the PGCC for the 100,000 loaded requests: not what is measured here.
export APP__WORKERS__RUN_IN_SERVE=false
"$bin/consent-api" migrate >/dev/null 2>&1
t0=$(date +%s)
sed "s|@DIR@|$work|g" scripts/bench/load.sql | psql "$db_url" -q -v ON_ERROR_STOP=1
echo "loaded in $(( $(date +%s) - t0 )) s: $(psql "$db_url" -tAc "SELECT (SELECT count(*) FROM empresas) || ' companies, ' || (SELECT count(*) FROM casos_de_uso) || ' use cases, ' || (SELECT count(*) FROM solicitacoes_consentimento) || ' consent requests'")"

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

c15t_url=""; c15t_pid=""; c15t_note="not run (BENCH_C15T=0)"
if [ "${BENCH_C15T:-1}" = 1 ]; then
  echo "== c15t (time-boxed)"
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

ticks=$(getconf CLK_TCK)
proc_cpu() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# The whole cluster: the postmaster, its live backends, and the backends already gone (cutime).
pg_cpu() {
  local total child
  total=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pg_pid/stat")
  for child in $(pgrep -P "$pg_pid"); do total=$((total + $(proc_cpu "$child"))); done
  echo "$total"
}
reset_hwm() { echo 5 > "/proc/$1/clear_refs" 2>/dev/null || true; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# measure NAME ROUND APP_PID KIND ARGS...: one timed run, one line of results.tsv.
measure() {
  local name=$1 round=$2 app=$3 kind=$4; shift 4
  local a0=0 a1=0 p0 p1 log="$work/$name-$round.out"
  [ "$app" != - ] && { reset_hwm "$app"; a0=$(proc_cpu "$app"); }
  p0=$(pg_cpu)
  local perf_pid=""
  if [ -n "${BENCH_PERF:-}" ] && [ "$app" != - ] && command -v perf >/dev/null; then
    perf record -q -F 499 -g -p "$app" -o "$work/perf-$name-$round.data" -- sleep "$seconds" >/dev/null 2>&1 &
    perf_pid=$!
  fi
  if [ "$kind" = wrk ]; then
    timeout $((seconds + 30)) wrk -t"$threads" -c"$conns" -d"${seconds}s" --timeout 5s "$@" > "$log" 2>&1 || true
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
    "$(awk -v a="$p0" -v b="$p1" -v t="$ticks" 'BEGIN{printf "%.2f", (b-a)/t}')" "$rss" "$seconds" >> "$results"
  tail -1 "$results" | awk -F'\t' '{printf "  %-16s round %s: %8.0f req/s  p50 %6.2f ms  p99 %7.2f ms  non-2xx %s\n", $1, $2, $3/$4, $7/1000, $8/1000, $5}'
}

export BENCH_DIR=$work BENCH_SCRIPTS=$root/scripts/bench
scenarios=${BENCH_ONLY:-"list create_ativo create_pendente pgcc_direct hash health pg_list pg_key_list c15t_record c15t_read"}
echo "== load: $rounds round(s) x ${seconds}s per scenario, $conns connections, $threads load threads"
for round in $(seq 1 "$rounds"); do
  for s in $scenarios; do
    case $s in
      list) measure list "$round" "$api_pid" wrk -s scripts/bench/list.lua "$api_url" ;;
      create_ativo) BENCH_MODE=ativo measure create_ativo "$round" "$api_pid" wrk -s scripts/bench/create.lua "$api_url" ;;
      create_pendente) BENCH_MODE=pendente measure create_pendente "$round" "$api_pid" wrk -s scripts/bench/create.lua "$api_url" ;;
      pgcc_direct) measure pgcc_direct "$round" "$sim_pid" wrk -s scripts/bench/pgcc_direct.lua "$sim_url" ;;
      hash) measure hash "$round" "$api_pid" wrk -s scripts/bench/hash.lua "$api_url" ;;
      health) measure health "$round" "$api_pid" wrk -s scripts/bench/health.lua "$api_url" ;;
      pg_list) measure pg_list "$round" - pgbench -f scripts/bench/pgbench_list.sql "$db_url" ;;
      pg_key_list) measure pg_key_list "$round" - pgbench -f scripts/bench/pgbench_key_list.sql "$db_url" ;;
      c15t_record|c15t_read)
        [ -n "$c15t_url" ] && measure "$s" "$round" "$c15t_pid" wrk -s "scripts/bench/$s.lua" "$c15t_url" ;;
    esac
  done
done

echo "== report"
# A partial or profiled run prints its table but leaves docs/performance.md alone.
doc=$root/docs/performance.md
[ -n "${BENCH_ONLY:-}${BENCH_PERF:-}" ] && doc=-
python3 scripts/bench/report.py "$results" "$doc" \
  --seconds "$seconds" --rounds "$rounds" --connections "$conns" --threads "$threads" \
  --c15t "$c15t_note" --elapsed "$(( $(date +%s) - started_at ))"
echo "bench done in $(( $(date +%s) - started_at )) s; table in docs/performance.md, raw lines in $results"
