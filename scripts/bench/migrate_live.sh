#!/usr/bin/env bash
# migrate_live.sh DB_URL CONSENT_API OUT_DIR: `consent-api migrate` on a loaded database while a
# reader runs (issue 21: a migration never stops the service). Run by `make bench-scale` at
# BENCH_SCALE_MIGRATE_SIZE (10^6), usable alone on any migrated database with consents.
#
# The database goes back to before the salt migration (2026-11-27-001471) by the down.sql of it
# and of every later migration, newest first, so that `migrate` redoes the salt's migrations
# and its backfill (every row gets its salt, in keyset batches) over the whole table. Meanwhile
# pgbench reads (two clients, each read a page of 20 of a random company's consents, whole rows:
# SELECT *) and logs every read's latency. Prints, and writes to OUT_DIR/migrate_live.tsv: rows,
# how long `migrate` took, the reads made meanwhile, the longest read and the 99th percentile.
# `consent-api` takes APP__DATABASE__URL (and the rest) from the environment.
set -euo pipefail
db=$1 api=$2 out=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
salt=20261127001471
companies=$(psql "$db" -Atc "SELECT count(*) FROM empresas")
rows=$(psql "$db" -Atc "SELECT count(*) FROM solicitacoes_consentimento")

for v in $(psql "$db" -Atc "SELECT version FROM __diesel_schema_migrations WHERE version >= '$salt' ORDER BY version DESC"); do
  d=$(ls -d "$root/migrations/${v:0:4}-${v:4:2}-${v:6:2}-${v:8:6}_"*)
  if grep -Eqs '^run_in_transaction *= *false' "$d/metadata.toml"; then single=(); else single=(-1); fi
  psql "$db" -q -v ON_ERROR_STOP=1 "${single[@]}" -f "$d/down.sql" \
    -c "DELETE FROM __diesel_schema_migrations WHERE version = '$v'" >/dev/null
done
psql "$db" -qc "VACUUM ANALYZE solicitacoes_consentimento" >/dev/null

mkdir -p "$out/migrate_live"; rm -f "$out/migrate_live/"*
cat > "$out/migrate_live/read.sql" <<SQL
\set n random(1, $companies)
SELECT * FROM solicitacoes_consentimento WHERE empresa_id = (SELECT id FROM empresas ORDER BY id OFFSET :n - 1 LIMIT 1) AND criacao = 'confirmada' ORDER BY criado_em DESC, id DESC LIMIT 20;
SQL
pgbench -n -c 2 -j 1 -T 100000 -f "$out/migrate_live/read.sql" -l --log-prefix "$out/migrate_live/read" "$db" \
  > "$out/migrate_live/pgbench.out" 2>&1 &
reader=$!
sleep 2
t0=$(date +%s.%N)
"$api" migrate > "$out/migrate_live/migrate.out" 2>&1
t1=$(date +%s.%N)
sleep 2   # reads logged but not yet written out when pgbench is stopped are after migrate (its logs are
          # buffered); SIGTERM: a background job of a script ignores SIGINT
kill -TERM "$reader" 2>/dev/null || true
wait "$reader" 2>/dev/null || true

# pgbench's log: client, transaction, latency in microseconds, script, epoch seconds, microseconds
read -r reads longest p99 < <(cat "$out/migrate_live/read".* | awk -v from="$t0" -v to="$t1" \
  '{ at = $5 + $6 / 1e6 - $3 / 1e6; if (at >= from - 0.5 && at <= to) print $3 }' | sort -n \
  | awk '{ v[NR] = $1 } END { if (NR == 0) { print 0, 0, 0; exit } i = int(NR * 0.99); if (i < 1) i = 1; print NR, v[NR], v[i] }')
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
printf 'rows\tmigrate_seconds\treads\tlongest_read_ms\tp99_read_ms\n%s\t%s\t%s\t%.1f\t%.1f\n' \
  "$rows" "$took" "$reads" "$(awk -v u="$longest" 'BEGIN{print u/1000}')" "$(awk -v u="$p99" 'BEGIN{print u/1000}')" \
  > "$out/migrate_live.tsv"
echo "migrate on $rows consents (salt migrations + backfill) took $took s; meanwhile $reads reads, the longest waited $(awk -v u="$longest" 'BEGIN{printf "%.1f", u/1000}') ms (p99 $(awk -v u="$p99" 'BEGIN{printf "%.1f", u/1000}') ms)"
grep -h "backfill" "$out/migrate_live/migrate.out" || true
