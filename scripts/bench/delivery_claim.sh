#!/usr/bin/env bash
# The webhook sender's claim against the size of one company's backlog (issue 21, part 8): for
# each SIZE, a throw-away cluster (pg_stat_statements on, shared_buffers as status_work.sh), company
# A with SIZE due deliveries over 10 URLs whose receivers refuse every connection (made with SQL,
# as a backlog of receivers that never answer leaves them), company B with one URL to a receiver
# that answers 200. `consent-api worker` runs the delivery job alone for DELIVERY_CLAIM_SECONDS
# (default 60) while B gets an event every second; the line reports the claim's statements as
# PostgreSQL timed them (pg_stat_statements: mean and max ms of finding the companies with due
# deliveries, and of one company's claim), how many deliveries A's senders attempted, and B's
# deliveries: how many arrived and their median and worst wait from the event's creation.
#
#   scripts/bench/delivery_claim.sh [SIZE ...]     (default: 1000 1000000)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/common.sh
source scripts/bench/measure.sh
require psql "PostgreSQL's client (Debian: apt-get install postgresql)"
bin=${CARGO_TARGET_DIR:-target}/${DELIVERY_CLAIM_PROFILE:-release}
if [ "${DELIVERY_CLAIM_PROFILE:-release}" = release ]; then cargo build --release --bins --quiet; else cargo build --bins --quiet; fi
run_seconds=${DELIVERY_CLAIM_SECONDS:-60}
shared_buffers=${DELIVERY_CLAIM_SHARED_BUFFERS:-6GB}
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(1000 1000000)
work=$(mktemp -d); dir=""; pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "$dir" ] && { scripts/pg.sh stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"; }
  if [ -n "${DELIVERY_CLAIM_KEEP:-}" ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
echo '{"empresas": []}' > "$work/seed.json"
# B's receiver: answers 200 and writes each body's arrival time (the event id is in the body)
cat > "$work/receiver.py" <<'PY'
import http.server, json, sys, time
out = open(sys.argv[1], "a", buffering=1)
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            ident = json.loads(body).get("id", "")
        except ValueError:
            ident = ""
        out.write(f"{time.time()}\t{ident}\n")
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(f"receiver on http://127.0.0.1:{s.server_address[1]}/", flush=True)
s.serve_forever()
PY
printf 'due_deliveries_of_A\tfind_companies_mean_ms\tmax_ms\tclaim_mean_ms\tmax_ms\tA_attempts\tB_arrived\tB_wait_p50_s\tB_wait_max_s\n'
for n in "${sizes[@]}"; do
  dir=$(cluster_dir "delivery-claim-$$-$n")
  admin=$(scripts/pg.sh start "$dir")
  psql "$admin" -qc "ALTER SYSTEM SET shared_buffers = '$shared_buffers'" \
    -c "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"
  scripts/pg.sh stop "$dir" >/dev/null; admin=$(scripts/pg.sh start "$dir")
  db=${admin%/postgres}/consent_deliveries
  psql "$admin" -qc "CREATE DATABASE consent_deliveries"
  export APP_ENV=development APP__DATABASE__URL="$db" RUST_LOG=error
  "$bin/consent-api" migrate >/dev/null 2>&1
  psql "$db" -qc "CREATE EXTENSION pg_stat_statements"
  "$bin/pgcc-sim" --port 0 --seed "$work/seed.json" > "$work/sim.out" 2> "$work/sim.log" & pids+=($!)
  export APP__PGCC__BASE_URL=$(wait_line "$work/sim.out" "pgcc-sim listening on ")
  python3 "$work/receiver.py" "$work/arrivals.tsv" > "$work/receiver.out" & pids+=($!)
  receiver=$(wait_line "$work/receiver.out" "receiver on ")
  a=$("$bin/consent-api" company create --nome "Empresa A" --cnpj 11222333000181)
  b=$("$bin/consent-api" company create --nome "Empresa B" --cnpj 11444777000161)
  key_a=$("$bin/consent-api" api-key issue --empresa "$a")
  key_b=$("$bin/consent-api" api-key issue --empresa "$b")
  APP__SERVER__PORT=0 APP__WORKERS__RUN_IN_SERVE=false "$bin/consent-api" serve > "$work/api.out" 2> "$work/api.log" & pids+=($!)
  api=$(wait_line "$work/api.out" "consent-api listening on ")
  for i in $(seq 1 10); do
    # port 9 (discard) listens nowhere here: every attempt is refused at once
    curl -sf -X POST -H "Api-Key: $key_a" -H 'Content-Type: application/json' \
      -d "{\"url\": \"http://127.0.0.1:9/a$i\"}" "$api/api/webhook-urls" >/dev/null
  done
  curl -sf -X POST -H "Api-Key: $key_b" -H 'Content-Type: application/json' \
    -d "{\"url\": \"$receiver\"}" "$api/api/webhook-urls" >/dev/null
  psql "$db" -q -c "
    INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em)
    SELECT gen_random_uuid(), '$a', 'solicitacao.criada', '{}', now() - interval '1 hour' + i * interval '1 microsecond'
    FROM generate_series(1, greatest($n / 10, 1)) i;
    INSERT INTO webhook_entregas (id, evento_id, webhook_url_id, empresa_id, status, tentativas,
                                  proxima_tentativa_em, criado_em, atualizado_em)
    SELECT gen_random_uuid(), e.id, u.id, e.empresa_id, 'pendente', 0, e.criado_em, e.criado_em, e.criado_em
    FROM webhook_eventos e JOIN webhook_urls u ON u.empresa_id = e.empresa_id
    WHERE e.empresa_id = '$a';" -c "VACUUM ANALYZE"
  due=$(psql "$db" -tAc "SELECT count(*) FROM webhook_entregas WHERE empresa_id = '$a' AND status = 'pendente'")
  psql "$db" -qc "SELECT pg_stat_statements_reset()" >/dev/null
  APP__WORKERS__STATUS_POLL_SECONDS=0 APP__WORKERS__EXPIRY_SECONDS=0 APP__WORKERS__SYNC_SECONDS=0 \
    APP__WORKERS__RECONCILE_SECONDS=0 APP__WORKERS__IDEMPOTENCY_PURGE_SECONDS=0 \
    APP__WORKERS__RETENTION_SECONDS=0 APP__WORKERS__DISABLE_CHECK_SECONDS=0 \
    "$bin/consent-api" worker > "$work/worker.out" 2> "$work/worker.log" & worker_pid=$!; pids+=($worker_pid)
  # B's events, one a second, each with its delivery due at once (as the API's outbox writes them)
  for i in $(seq 1 "$run_seconds"); do
    psql "$db" -qc "WITH novo AS (SELECT gen_random_uuid() AS id), ev AS (
        INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em)
        SELECT id, '$b', 'solicitacao.criada', json_build_object('id', id)::text, now() FROM novo
        RETURNING id, empresa_id, criado_em)
      INSERT INTO webhook_entregas (id, evento_id, webhook_url_id, empresa_id, status, tentativas,
                                    proxima_tentativa_em, criado_em, atualizado_em)
      SELECT gen_random_uuid(), ev.id, u.id, ev.empresa_id, 'pendente', 0, ev.criado_em, ev.criado_em, ev.criado_em
      FROM ev JOIN webhook_urls u ON u.empresa_id = ev.empresa_id" >/dev/null
    sleep 1
  done
  sleep 5
  kill "$worker_pid"; wait "$worker_pid" 2>/dev/null || true
  read -r find_mean find_max claim_mean claim_max < <(psql "$db" -tA -F ' ' -c "
    SELECT round(COALESCE(sum(total_exec_time) FILTER (WHERE query LIKE '%empresas_pendentes%' AND query LIKE '%<= \$1%')
                 / nullif(sum(calls) FILTER (WHERE query LIKE '%empresas_pendentes%' AND query LIKE '%<= \$1%'), 0), 0)::numeric, 2),
           round(COALESCE(max(max_exec_time) FILTER (WHERE query LIKE '%empresas_pendentes%' AND query LIKE '%<= \$1%'), 0)::numeric, 2),
           round(COALESCE(sum(total_exec_time) FILTER (WHERE query LIKE '%escolhidas%')
                 / nullif(sum(calls) FILTER (WHERE query LIKE '%escolhidas%'), 0), 0)::numeric, 2),
           round(COALESCE(max(max_exec_time) FILTER (WHERE query LIKE '%escolhidas%'), 0)::numeric, 2)
    FROM pg_stat_statements")
  attempts=$(psql "$db" -tAc "SELECT count(*) FROM webhook_tentativas t JOIN webhook_entregas e ON e.id = t.entrega_id WHERE e.empresa_id = '$a'")
  psql "$db" -tA -F $'\t' -c "SELECT e.id, extract(epoch FROM e.criado_em) FROM webhook_eventos e WHERE e.empresa_id = '$b'" > "$work/b_events.tsv"
  read -r arrived p50 worst < <(python3 - "$work/b_events.tsv" "$work/arrivals.tsv" <<'PY'
import statistics, sys
created = dict(l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip())
waits = []
for l in open(sys.argv[2]):
    t, ident = l.rstrip("\n").split("\t")
    if ident in created:
        waits.append(float(t) - float(created[ident]))
print(len(waits), f"{statistics.median(waits):.2f}" if waits else "-", f"{max(waits):.2f}" if waits else "-")
PY
)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\n' "$due" "$find_mean" "$find_max" "$claim_mean" "$claim_max" \
    "$attempts" "$arrived" "$(wc -l < "$work/b_events.tsv")" "$p50" "$worst"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; pids=()
  rm -f "$work/arrivals.tsv"
  scripts/pg.sh stop "$dir" >/dev/null; rm -rf "$dir"; dir=""
done
