#!/usr/bin/env bash
# `make bench-import`: the bulk import's figures (issue 37; docs/performance.md, "Bulk import").
# A throw-away PostgreSQL, the PGCC simulator and a release build of consent-api running as the
# runtime role, two companies with ten use cases each, then:
#
# 1. Staging: company 1 sends a file of BENCH_IMPORT_LINES (10^6) JSON Lines, one in 100 broken
#    (scripts/bench/gen_import.py: a wrong CPF check digit, an unknown template, a future answer
#    date, a repeated idExterno). POST /api/importacoes answers once every line was read, validated
#    and staged: lines / that time is the staging rate. The service's RSS is sampled every 0.2 s
#    from the upload's start to the end of step 2 (peak printed).
# 2. Registration: `registradas` read every second for BENCH_IMPORT_REGISTER_SECONDS (30) at
#    APP__IMPORTACAO__PGCC_CALLS_PER_SECOND = BENCH_IMPORT_RATE (200; the simulator answers as fast
#    as it can, so the budget is the service's own): lines registered a second against the budget.
# 3. Errors: GET /api/importacoes/{id}/erros must name exactly the broken lines (the run fails
#    otherwise), then the import is cancelled.
# 4. Fairness: company 2's creations (loadgen, open loop, BENCH_IMPORT_PROBE_RATE a second for
#    BENCH_IMPORT_PROBE_SECONDS) on the idle service, then again while company 1 imports a file of
#    BENCH_IMPORT_LATENCY_LINES (10^5) lines and registers them: p50/p99 of both runs, side by side.
#
# Results: target/bench-import/results.txt. Not run by `make test` nor CI (a benchmark, never a
# timed test: the figures are compared within one run, on a machine that may be shared).
set -euo pipefail
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/bench/measure.sh"
root=$(repo_root)
cd "$root"
require cargo "install Rust (https://rustup.rs)"
require python3 "install Python 3"
require psql "install PostgreSQL 15 (Debian: apt-get install postgresql)"
require curl "install curl"

lines=${BENCH_IMPORT_LINES:-1000000}
rate=${BENCH_IMPORT_RATE:-200}
register_seconds=${BENCH_IMPORT_REGISTER_SECONDS:-30}
latency_lines=${BENCH_IMPORT_LATENCY_LINES:-100000}
probe_rate=${BENCH_IMPORT_PROBE_RATE:-50}
probe_seconds=${BENCH_IMPORT_PROBE_SECONDS:-20}

out=$root/target/bench-import
work=$out/run
rm -rf "$work"; mkdir -p "$work"
chmod 755 "$out" "$work"
dir=$(cluster_dir "bench-import-$$")
sim_pid=""; api_pid=""; sampler_pid=""
cleanup() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null || true
  [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null || true
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  scripts/pg.sh stop "$dir" 2>/dev/null || true; rm -rf "$dir"
}
trap cleanup EXIT

echo "== release build, data set, PostgreSQL"
python3 scripts/bench/gen_data.py "$work" 2 10 0 > "$work/gen_data.out"
python3 scripts/bench/gen_import.py "$work/import.jsonl" "$work/broken.txt" "$lines" \
  "$(seq -f 'tpl-0000-%03g' 0 9 | paste -sd,)" bench
python3 scripts/bench/gen_import.py "$work/probe-import.jsonl" "$work/probe-broken.txt" "$latency_lines" \
  "$(seq -f 'tpl-0000-%03g' 0 9 | paste -sd,)" sonda 0 > /dev/null
cargo build --release --bins --quiet
bin=${CARGO_TARGET_DIR:-$root/target}/release
admin=$(scripts/pg.sh start "$dir")
db_url="${admin%/postgres}/consent_bench"
psql "$admin" -qc "CREATE DATABASE consent_bench"
chmod 644 "$work"/*
export APP_ENV=development
psql "$admin" -qc "DO \$\$ BEGIN CREATE ROLE consent_app LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$"
export APP__DATABASE__MIGRATION_URL="$db_url"
export APP__DATABASE__URL="${db_url/postgres@/consent_app@}"
export APP__LOG__FORMAT=json APP__LOG__LEVEL=info
export APP__SERVER__HOST=127.0.0.1 APP__SERVER__PORT=0
export APP__RATE_LIMIT__PER_SECOND=1000000 APP__RATE_LIMIT__BURST=1000000
export APP__IMPORTACAO__PGCC_CALLS_PER_SECOND="$rate"
"$bin/consent-api" migrate >/dev/null 2>&1
sed "s|@DIR@|$work|g" scripts/bench/load.sql | psql "$db_url" -q -v ON_ERROR_STOP=1

"$bin/pgcc-sim" --port 0 --seed "$work/seed.json" > "$work/sim.out" 2> "$work/pgcc-sim.log" &
sim_pid=$!
export APP__PGCC__BASE_URL=$(wait_line "$work/sim.out" "pgcc-sim listening on ")
"$bin/consent-api" serve > "$work/api.out" 2> "$work/consent-api.log" &
api_pid=$!
api=$(wait_line "$work/api.out" "consent-api listening on ")
pg_pid=$(head -1 "$dir/data/postmaster.pid")
hz=$(getconf CLK_TCK)
key1=$(sed -n 1p "$work/keys.txt"); key2=$(sed -n 2p "$work/keys.txt")

# field NAME FILE: a field of the envelope's data
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[2]))["data"][sys.argv[1]])' "$1" "$2"; }
status_of() { curl -sf -H "Api-Key: $key1" "$api/api/importacoes/$1" > "$work/status.json"; }

echo "== 1. staging $lines lines"
( peak=0; while kill -0 "$api_pid" 2>/dev/null; do
    r=$(awk '/^VmRSS/ {print $2}' "/proc/$api_pid/status" 2>/dev/null || echo 0)
    [ "${r:-0}" -gt "$peak" ] && peak=$r && echo "$peak" > "$work/peak_rss_kb"
    sleep 0.2
  done ) &
sampler_pid=$!
c0=$(proc_cpu "$api_pid"); p0=$(pg_cpu)
t0=$(date +%s.%N)
code=$(curl -sS -o "$work/created.json" -w '%{http_code}' -H "Api-Key: $key1" \
  -H 'Content-Type: application/x-ndjson' --data-binary "@$work/import.jsonl" "$api/api/importacoes")
t1=$(date +%s.%N)
c1=$(proc_cpu "$api_pid"); p1=$(pg_cpu)
[ "$code" = 202 ] || { echo "error: the import answered $code: $(head -c 400 "$work/created.json")" >&2; exit 1; }
id=$(field id "$work/created.json")
staged_s=$(python3 -c "print(round($t1 - $t0, 2))")
stage_rate=$(python3 -c "print(round($lines / ($t1 - $t0)))")
stage_cpu="consent-api $(python3 -c "print(round(($c1 - $c0) / $hz, 1))") CPU-s, PostgreSQL $(python3 -c "print(round(($p1 - $p0) / $hz, 1))") CPU-s"
echo "staged in ${staged_s} s ($stage_cpu): $stage_rate lines/s; valid $(field validas "$work/created.json"), failed $(field falhas "$work/created.json")"

echo "== 2. registration for ${register_seconds} s at a budget of $rate PGCC calls/s"
sleep 3  # the workers' first claim
status_of "$id"; r0=$(field registradas "$work/status.json"); s0=$(date +%s.%N)
sleep "$register_seconds"
status_of "$id"; r1=$(field registradas "$work/status.json"); s1=$(date +%s.%N)
register_rate=$(python3 -c "print(round(($r1 - $r0) / ($s1 - $s0), 1))")
echo "registered $((r1 - r0)) in $(python3 -c "print(round($s1 - $s0, 1))") s: $register_rate lines/s (budget $rate)"
kill "$sampler_pid" 2>/dev/null || true; wait "$sampler_pid" 2>/dev/null || true; sampler_pid=""
peak_mb=$(python3 -c "print(round($(cat "$work/peak_rss_kb") / 1024, 1))")
echo "peak RSS from the upload's start: $peak_mb MiB"

echo "== 3. errors"
curl -sf -H "Api-Key: $key1" "$api/api/importacoes/$id/erros" > "$work/errors.jsonl"
python3 - "$work/errors.jsonl" "$work/broken.txt" <<'EOF'
import json, sys
named = sorted({json.loads(l)["linha"] for l in open(sys.argv[1]) if l.strip()})
broken = sorted(int(l) for l in open(sys.argv[2]) if l.strip())
if named != broken:
    extra, missing = sorted(set(named) - set(broken)), sorted(set(broken) - set(named))
    sys.exit(f"error: the errors name {len(named)} lines, the file broke {len(broken)}: "
             f"extra {extra[:10]}, missing {missing[:10]}")
print(f"the errors name exactly the {len(broken)} broken lines")
EOF
curl -sf -o /dev/null -X POST -H "Api-Key: $key1" "$api/api/importacoes/$id/cancelar"

echo "== 4. company 2's creations: idle, then during company 1's import of $latency_lines lines"
body='{"casoDeUsoIdTemplate":"tpl-0001-001","cpfTitular":"52998224725","modalidadeAcesso":"Direto","tipoTitular":"PessoaFisica","dataExpiracaoConsentimento":"2030-12-31T23:59:59Z","dataTitularRespondeuConsentimento":"2026-01-10T12:00:00Z","provaColeta":"assinatura:bench"}'
echo "$body" > "$work/probe-body.json"
probe() {
  "$bin/loadgen" --seconds "$probe_seconds" --connections 4 --rate "$probe_rate" --attempts 1 \
    --method POST --header "Api-Key: $key2" --bodies "$work/probe-body.json" --out "$work/probe-$1.json" \
    "$api/api/solicitacao-consentimento/criar/ativo" > /dev/null
}
probe idle
curl -sS -o "$work/probe-created.json" -H "Api-Key: $key1" -H 'Content-Type: application/x-ndjson' \
  --data-binary "@$work/probe-import.jsonl" "$api/api/importacoes" &
upload_pid=$!
probe import
wait "$upload_pid"
python3 - "$work" > "$work/probe.txt" <<'EOF'
import json, sys
w = sys.argv[1]
for name in ("idle", "import"):
    r = json.load(open(f"{w}/probe-{name}.json"))
    p = r["latencyPercentiles"]
    codes = r.get("statusCodeDistribution", {})
    print(f"{name}: p50 {p['p50'] * 1000:.2f} ms, p99 {p['p99'] * 1000:.2f} ms, answers {codes}")
EOF
cat "$work/probe.txt"

{
  echo "bulk import, $(date -u +%FT%TZ), $(git rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "lines $lines, broken $(wc -l < "$work/broken.txt")"
  echo "staging: ${staged_s} s, $stage_rate lines/s ($stage_cpu)"
  echo "registration: $register_rate lines/s at a budget of $rate"
  echo "peak RSS: $peak_mb MiB"
  echo "company 2's creations at $probe_rate/s for $probe_seconds s:"
  cat "$work/probe.txt"
} | tee "$out/results.txt"
