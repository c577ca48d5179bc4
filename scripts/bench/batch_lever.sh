#!/usr/bin/env bash
# Issue 15's "batched creations" lever, measured: scripts/bench/pgbench_create_batch.sql (the
# statements one creation sends, each written for k creations at once) at k = 1, 8 and 16,
# interleaved with pg_create (scripts/bench/pgbench_create.sql, as make bench runs it), three
# rounds of 8 s, 16 clients, on make bench's data set. Prints TPS and creations/s (k x TPS): the
# lever is creations/s at k against k = 1 (same statements, same prelude shape). An upper bound:
# the gathering of concurrent requests into a batch is not measured (docs/performance.md).
# Needs the release build (make release) and PostgreSQL 15 with pgbench. Not part of make bench.
source "$(dirname "$0")/lever_db.sh" batch-ab
run() { pgbench -n -M prepared -c 16 -j 2 -T "${BATCH_LEVER_SECONDS:-8}" -D companies=1000 -D use_cases=100 "$@" "$db" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p'; }
per_second() { python3 -c "import sys; print(round(float(sys.argv[1]) * int(sys.argv[2])))" "$1" "$2"; }
for round in 1 2 3; do
  line="round $round: pg_create $(per_second "$(run -f scripts/bench/pgbench_create.sql)" 1)/s"
  for k in 1 8 16; do
    # A generic plan, as a real batch statement would need: with array binds PostgreSQL's
    # custom plans (unnest of one row) look cheaper than the generic one (ten rows assumed), so
    # it would plan the statement again on every execution (measured: k=1 at a third of pg_create).
    line="$line; k=$k $(per_second "$(PGOPTIONS="-c plan_cache_mode=force_generic_plan" run -D k=$k -f scripts/bench/pgbench_create_batch.sql)" $k)/s"
  done
  echo "$line"
done
# Every creation of every run must have been confirmed: a batch that stored rows it did not
# confirm would show here.
psql "$db" -Atc "SELECT 'rows by creation state: ' || string_agg(criacao || ' ' || n, ', ') FROM (SELECT criacao, count(*) n FROM solicitacoes_consentimento GROUP BY 1) c"
