#!/usr/bin/env bash
# Issue 15's "fewer indexes" lever, measured: pg_create (scripts/bench/pgbench_create.sql, the
# statements one creation sends) with every index, then without the seven secondary indexes a
# creation writes (five on solicitacoes_consentimento, two on webhook_eventos), interleaved, three
# rounds of 8 s, 16 clients, on make bench's data set. An upper bound of what dropping indexes
# could buy: each of them serves a read or a worker (docs/performance-history.md, "fewer indexes").
# Needs the release build (make release) and PostgreSQL 15 with pgbench. Not part of make bench.
source "$(dirname "$0")/lever_db.sh" idx-ab
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
