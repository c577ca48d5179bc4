#!/usr/bin/env bash
# Issue 15's "fewer indexes" lever, measured: pg_create (scripts/bench/pgbench_create.sql, the
# statements one creation sends) with every index, then without the seven secondary indexes a
# creation writes (five on solicitacoes_consentimento, two on webhook_eventos), interleaved, three
# rounds of 8 s, 16 clients, on make bench's data set. An upper bound of what dropping indexes
# could buy: each of them serves a read or a worker (docs/performance.md, "fewer indexes").
# Needs the release build (make release) and PostgreSQL 15 with pgbench. Not part of make bench.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/common.sh
work=$(mktemp -d); dir=$(cluster_dir "idx-ab-$$")
trap 'scripts/pg.sh stop "$dir" >/dev/null 2>&1 || true; rm -rf "$work" "$dir"' EXIT
python3 scripts/bench/gen_data.py "$work" 1000 100 100000 >/dev/null
admin=$(scripts/pg.sh start "$dir")
db=${admin%/postgres}/consent_bench
psql "$admin" -qc "CREATE DATABASE consent_bench"
APP_ENV=development APP__DATABASE__URL="$db" "${CARGO_TARGET_DIR:-target}/release/consent-api" migrate >/dev/null 2>&1
sed "s|@DIR@|$work|g" scripts/bench/load.sql | psql "$db" -q -v ON_ERROR_STOP=1
psql "$db" -qc "VACUUM ANALYZE"
defs=$(psql "$db" -Atc "SELECT indexdef || ';' FROM pg_indexes WHERE indexname IN ('solicitacoes_consentimento_empresa_criado_em_idx','solicitacoes_consentimento_status_devido_idx','solicitacoes_consentimento_expiracao_idx','solicitacoes_consentimento_validas_idx','solicitacoes_consentimento_titular_idx','webhook_eventos_criado_em_idx','webhook_eventos_empresa_criado_em_idx')")
names="solicitacoes_consentimento_empresa_criado_em_idx, solicitacoes_consentimento_status_devido_idx, solicitacoes_consentimento_expiracao_idx, solicitacoes_consentimento_validas_idx, solicitacoes_consentimento_titular_idx, webhook_eventos_criado_em_idx, webhook_eventos_empresa_criado_em_idx"
run() { pgbench -n -M prepared -c 16 -j 2 -T 8 -D companies=1000 -D use_cases=100 -f scripts/bench/pgbench_create.sql "$db" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p'; }
for round in 1 2 3; do
  a=$(run)
  psql "$db" -qc "DROP INDEX $names"
  b=$(run)
  psql "$db" -q <<<"$defs"
  echo "round $round: all indexes $a tps; without the 7 secondary ones $b tps"
done
