#!/usr/bin/env bash
# What the status worker costs at scale with no API traffic (issue 21, part 8): for each size,
# a throw-away cluster with that many consent requests (80% open) in the policy's steady state
# (scripts/bench/status_work_load.sql), `consent-api worker` with only the status job (the
# defaults: policy 300 s pending / 900 s active, 20 PGCC calls a second; batch_size 500) against
# pgcc-sim for STATUS_WORK_SECONDS (default 60), and one line: PostgreSQL CPU seconds per minute
# (and as a share of one core), PGCC status calls and ids per second, the checks overdue by more
# than one poll period at the end (young requests' own rows) and the sweeps' passes late by more
# than that, with the latest pass's lateness in seconds. Meanwhile STATUS_WORK_NEW_PER_SECOND
# (default 2) new `pendente` requests a second arrive, spread over the companies (inserted with
# SQL, due for their first check at once: the API's creation without the API), and the line ends
# with how long they waited for their first check (each seen by a probe every second: the
# schedule row a first check writes): median and p99 in seconds, and how many were checked.
# Then the worker's every other loop (expiry, retention, the key purge, the reconciler, the
# scheduled sync, the webhook sender and its checks) runs each second with nothing due for
# STATUS_WORK_OTHERS_SECONDS (default 60): PostgreSQL's CPU seconds per minute of finding no work. The simulator does not know the loaded requests, so every
# check finds no change: the common case, and the one whose cost must follow what is due.
#
#   scripts/bench/status_work.sh [SIZE ...]     (default: 100000 1000000)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/common.sh
source scripts/bench/measure.sh
require psql "PostgreSQL's client (Debian: apt-get install postgresql)"
# STATUS_WORK_BIN: a directory holding consent-api and pgcc-sim already built (a long run then
# measures those binaries while the tree is edited and rebuilt beside it)
bin=${STATUS_WORK_BIN:-${CARGO_TARGET_DIR:-target}/${STATUS_WORK_PROFILE:-release}}
if [ -n "${STATUS_WORK_BIN:-}" ]; then :
elif [ "${STATUS_WORK_PROFILE:-release}" = release ]; then cargo build --release --bins --quiet
else cargo build --bins --quiet; fi
run_seconds=${STATUS_WORK_SECONDS:-60}
new_per_second=${STATUS_WORK_NEW_PER_SECOND:-2}
others_seconds=${STATUS_WORK_OTHERS_SECONDS:-60}
# PostgreSQL's own cache as a production server of this size would have it (a quarter of 24 GB):
# with the default 128 MB the sweep's reads of the consent rows come from the OS cache through
# read(2), about 3x the CPU per check (measured at 10^6: 31 us against 10 us a row).
shared_buffers=${STATUS_WORK_SHARED_BUFFERS:-6GB}
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(100000 1000000)
# pg_stat_statements of each size's status window: STATUS_WORK_STATEMENTS_DIR (default target/bench)
statements_dir=${STATUS_WORK_STATEMENTS_DIR:-target/bench}; mkdir -p "$statements_dir"
work=$(mktemp -d); dir=""; sim_pid=""; worker_pid=""; arrivals_pid=""
cleanup() {
  [ -n "$arrivals_pid" ] && kill "$arrivals_pid" 2>/dev/null || true
  [ -n "$worker_pid" ] && kill "$worker_pid" 2>/dev/null || true
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  [ -n "$dir" ] && { scripts/pg.sh stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"; }
  if [ -n "${STATUS_WORK_KEEP:-}" ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
ticks=$(getconf CLK_TCK)
echo '{"empresas": []}' > "$work/seed.json"
# new pending requests, $new_per_second a second, each due for its first check at once
arrivals() {
  local db=$1 i=0
  while :; do
    psql "$db" -qc "WITH novas AS (
      INSERT INTO solicitacoes_consentimento (id, empresa_id, caso_de_uso_id, caso_de_uso_id_template,
        cpf_titular, tipo_titular, modalidade_acesso, data_expiracao_consentimento, status, pgcc_id,
        hash, sal_hash, criado_em, atualizado_em, criacao)
      SELECT gen_random_uuid(), md5('empresa' || (g % 100 + 1))::uuid, md5('caso' || (g % 100 + 1))::uuid,
        'tpl-1', '52998224725', 'PessoaFisica', 'Direto', now() + interval '5 years', 'pendente',
        'nova-$i-' || g, encode(sha256(('nova-$i-' || g)::bytea), 'hex'), md5(g::text), now(), now(),
        'confirmada'
      FROM generate_series(1, $new_per_second) g
      RETURNING empresa_id, id, pgcc_id, criado_em), agendadas AS (
    INSERT INTO verificacoes_status (empresa_id, solicitacao_id, pgcc_id, proxima_em)
    SELECT empresa_id, id, pgcc_id, criado_em FROM novas)
    INSERT INTO bench_novas SELECT empresa_id, id, criado_em FROM novas;
    -- a first check leaves the request due again status_poll_seconds (10) later: seen here
    -- within a second, before its second check rewrites the row
    INSERT INTO bench_primeiras
    SELECT n.id, v.proxima_em - interval '10 seconds'
    FROM bench_novas n
    JOIN verificacoes_status v ON v.empresa_id = n.empresa_id AND v.solicitacao_id = n.id
    WHERE v.intervalo_segundos = 10
    ON CONFLICT DO NOTHING" >/dev/null 2>&1 || true
    i=$((i + 1)); sleep 1
  done
}
# worker_backends_cpu DB: "pid:ticks ..." of the backends serving the worker's pool (every client
# backend of DB but psql's): the status work's own database CPU, apart from the harness's
# connections (the arrivals, their probe) and the cluster's background processes
worker_backends_cpu() {
  local pid out=""
  for pid in $(psql "$1" -tAc "SELECT pid FROM pg_stat_activity WHERE datname = current_database()
      AND backend_type = 'client backend' AND application_name <> 'psql' AND pid <> pg_backend_pid()"); do
    out="$out $pid:$(proc_cpu "$pid")"
  done
  echo "$out"
}
printf 'consents\topen\tpg_cpu_s_per_min\tshare_of_one_core\tpgcc_calls_per_s\tids_per_s\toverdue_at_end\tpasses_late\tlatest_pass_late_s\tnew_first_check_p50_s\tp99_s\tnew_checked\tother_loops_idle_pg_cpu_s_per_min\tworker_backends_cpu_s_per_min\tworker_backends_share\n'
for n in "${sizes[@]}"; do
  dir=$(cluster_dir "status-work-$$-$n")
  admin=$(scripts/pg.sh start "$dir")
  psql "$admin" -qc "ALTER SYSTEM SET shared_buffers = '$shared_buffers'" \
    -c "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"
  scripts/pg.sh stop "$dir" >/dev/null; admin=$(scripts/pg.sh start "$dir")
  # planning time per statement too (a setting of the library, known once it is loaded)
  psql "$admin" -qc "ALTER SYSTEM SET pg_stat_statements.track_planning = on" -c "SELECT pg_reload_conf()" >/dev/null
  db=${admin%/postgres}/consent_status
  psql "$admin" -qc "CREATE DATABASE consent_status"
  psql "$db" -qc "CREATE EXTENSION pg_stat_statements"
  # STATUS_WORK_PLAN_CACHE_MODE (auto | force_generic_plan | force_custom_plan): the experiment
  # of docs/scaling.md, every session of the database planning that way
  if [ -n "${STATUS_WORK_PLAN_CACHE_MODE:-}" ]; then
    psql "$db" -qc "ALTER DATABASE consent_status SET plan_cache_mode = '$STATUS_WORK_PLAN_CACHE_MODE'"
  fi
  APP_ENV=development APP__DATABASE__URL="$db" "$bin/consent-api" migrate >/dev/null 2>&1
  psql "$db" -q -v n="$n" -f scripts/bench/status_work_load.sql >/dev/null
  # a production database's steady state is vacuumed: without this, autovacuum's first pass over
  # the freshly loaded tables (minutes of CPU at 10^7) lands in the measured window
  psql "$db" -qc "VACUUM (FREEZE, ANALYZE)" -c "CHECKPOINT"
  psql "$db" -qc "CREATE TABLE bench_novas (empresa_id uuid, id uuid PRIMARY KEY, criado_em timestamptz);
    CREATE TABLE bench_primeiras (id uuid PRIMARY KEY, checada_em timestamptz)"
  open=$(psql "$db" -tAc "SELECT count(*) FROM verificacoes_status")
  pg_pid=$(head -1 "$dir/data/postmaster.pid")
  "$bin/pgcc-sim" --port 0 --seed "$work/seed.json" > "$work/sim.out" 2> "$work/sim.log" &
  sim_pid=$!
  sim_url=$(wait_line "$work/sim.out" "pgcc-sim listening on ")
  APP_ENV=development APP__DATABASE__URL="$db" APP__PGCC__BASE_URL="$sim_url" RUST_LOG=error \
    APP__WORKERS__STATUS_POLL_SECONDS=10 APP__WORKERS__BATCH_SIZE=500 APP__WORKERS__EXPIRY_SECONDS=0 APP__WORKERS__SYNC_SECONDS=0 \
    APP__WORKERS__RECONCILE_SECONDS=0 APP__WORKERS__IDEMPOTENCY_PURGE_SECONDS=0 \
    APP__WORKERS__RETENTION_SECONDS=0 APP__WORKERS__DELIVERY_POLL_MS=0 \
    APP__WORKERS__DISABLE_CHECK_SECONDS=0 \
    "$bin/consent-api" worker > "$work/worker.out" 2> "$work/worker.log" &
  worker_pid=$!
  sleep 5 # the worker's start and first drain
  curl -s -X DELETE "$sim_url/_sim/status-consultas" >/dev/null
  psql "$db" -qc "SELECT pg_stat_statements_reset()" >/dev/null
  w0=$(worker_backends_cpu "$db")
  c0=$(pg_cpu)
  arrivals "$db" & arrivals_pid=$!
  sleep "$run_seconds"
  c1=$(pg_cpu)
  w1=$(worker_backends_cpu "$db")
  kill "$arrivals_pid"; wait "$arrivals_pid" 2>/dev/null || true; arrivals_pid=""
  # what each statement cost in the window (the harness's own statements included, marked by
  # their tables: bench_novas, bench_primeiras), the largest first
  psql "$db" -F $'\t' -Ac "SELECT calls, round(total_exec_time::numeric, 1) AS total_ms,
      plans, round(total_plan_time::numeric, 1) AS plan_ms,
      round(mean_exec_time::numeric, 3) AS mean_ms, rows,
      left(regexp_replace(query, '\s+', ' ', 'g'), 160) AS statement
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    ORDER BY total_exec_time + total_plan_time DESC LIMIT 25" > "$statements_dir/statements-$n.tsv"
  read -r calls ids < <(curl -s "$sim_url/_sim/status-chamadas" |
    python3 -c 'import json,sys; c=json.load(sys.stdin); print(len(c), sum(x["ids"] for x in c))')
  overdue=$(psql "$db" -tAc "SELECT count(*) FROM verificacoes_status WHERE proxima_em < now() - interval '30 seconds'")
  read -r passes_late latest_late < <(psql "$db" -tA -F ' ' -c "SELECT count(*) FILTER (WHERE proxima_em < now() - interval '30 seconds'), COALESCE(round(EXTRACT(EPOCH FROM now() - min(proxima_em)))::bigint, 0) FROM varreduras_status WHERE proxima_em <= now()")
  # each new request's first check, as the arrivals' loop saw it (bench_primeiras); the last
  # seconds' arrivals may not have had theirs yet (counted apart)
  read -r p50 p99 new_checked < <(psql "$db" -tA -F ' ' -c "
    SELECT COALESCE(round(percentile_cont(0.5) WITHIN GROUP (ORDER BY espera)::numeric, 1), -1),
           COALESCE(round(percentile_cont(0.99) WITHIN GROUP (ORDER BY espera)::numeric, 1), -1),
           count(espera) || '/' || count(*)
    FROM (SELECT EXTRACT(EPOCH FROM p.checada_em - n.criado_em) AS espera
          FROM bench_novas n LEFT JOIN bench_primeiras p ON p.id = n.id) x")
  kill "$worker_pid"; wait "$worker_pid" 2>/dev/null || true; worker_pid=""
  # every other loop with nothing due (no expiry, no old rows, no deliveries, no creation in
  # flight; the scheduled sync on): what finding no work costs at this size
  APP_ENV=development APP__DATABASE__URL="$db" APP__PGCC__BASE_URL="$sim_url" RUST_LOG=error \
    APP__WORKERS__STATUS_POLL_SECONDS=0 APP__WORKERS__EXPIRY_SECONDS=1 APP__WORKERS__SYNC_SECONDS=10 \
    APP__WORKERS__RECONCILE_SECONDS=1 APP__WORKERS__IDEMPOTENCY_PURGE_SECONDS=1 \
    APP__WORKERS__RETENTION_SECONDS=1 APP__WORKERS__DELIVERY_POLL_MS=200 \
    APP__WORKERS__DISABLE_CHECK_SECONDS=1 \
    "$bin/consent-api" worker > "$work/others.out" 2> "$work/others.log" &
  worker_pid=$!
  sleep 5
  o0=$(pg_cpu)
  sleep "$others_seconds"
  o1=$(pg_cpu)
  kill "$worker_pid"; wait "$worker_pid" 2>/dev/null || true; worker_pid=""
  kill "$sim_pid"; wait "$sim_pid" 2>/dev/null || true; sim_pid=""
  scripts/pg.sh stop "$dir" >/dev/null; rm -rf "$dir"; dir=""
  python3 - "$n" "$open" "$c0" "$c1" "$ticks" "$run_seconds" "$calls" "$ids" "$overdue" "$passes_late" "$latest_late" "$p50" "$p99" "$new_checked" "$o0" "$o1" "$others_seconds" "$w0" "$w1" <<'PY'
import sys
n, opn, c0, c1, ticks, secs, calls, ids, overdue, passes_late, latest_late, p50, p99, new_checked, o0, o1, osecs, w0, w1 = sys.argv[1:]
# a backend that opened during the window counts whole; one that closed in it is not seen
start = dict(x.split(":") for x in w0.split())
worker = sum(int(t) - int(start.get(p, 0)) for p, t in (x.split(":") for x in w1.split())) / int(ticks)
others = (int(o1) - int(o0)) / int(ticks) * 60 / float(osecs)
cpu = (int(c1) - int(c0)) / int(ticks)
secs = float(secs)
print(f"{n}\t{opn}\t{cpu * 60 / secs:.2f}\t{cpu / secs:.1%}\t{int(calls) / secs:.1f}\t{int(ids) / secs:.0f}\t{overdue}\t{passes_late}\t{latest_late}\t{p50}\t{p99}\t{new_checked}\t{others:.2f}\t{worker * 60 / float(secs):.2f}\t{worker / float(secs):.1%}")
PY
done
