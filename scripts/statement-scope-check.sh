#!/usr/bin/env bash
# The statement-scope check of `make test` (issue 23, part 3): over CLUSTER_LOG, written with
# `log_statement = all` while the tests ran, every data statement of the service's sessions
# (`application_name = consent-api`) that names a tenant table must name `empresa_id` too, but
# those listed in scripts/statement_scope_allowed.txt with their reason. The tenant tables come
# from the catalog of a database migrated here.
#
#   scripts/statement-scope-check.sh ADMIN_URL CLUSTER_LOG
set -euo pipefail
cd "$(dirname "$0")/.."
admin=$1 log=$2
db=${admin%/*}/statement_scope_catalog
psql "$admin" -qc "DROP DATABASE IF EXISTS statement_scope_catalog" -c "CREATE DATABASE statement_scope_catalog" >/dev/null
APP_ENV=development APP__DATABASE__URL="$db" RUST_LOG=error \
  "${CARGO_TARGET_DIR:-target}/debug/consent-api" migrate >/dev/null 2>&1 \
  || { echo "statement scope: could not migrate the catalog database" >&2; exit 1; }
# the check must be able to fail: a statement without its company, in a log of its own
probe=$(mktemp)
trap 'rm -f "$probe"' EXIT
echo "2026-01-01 00:00:00.000 UTC [1] consent-api: LOG:  execute s1: SELECT id FROM webhook_eventos WHERE id = \$1" > "$probe"
if python3 scripts/statement_scope.py "$db" "$probe" --statements --app consent-api --fail >/dev/null; then
  echo "statement scope: the check passed a statement without its company" >&2
  exit 1
fi
python3 scripts/statement_scope.py "$db" "$log" --statements --app consent-api \
  --allowed scripts/statement_scope_allowed.txt --fail | grep -v '^allowed' | cut -c1-400
