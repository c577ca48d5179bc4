# Sourced by the lever scripts (index_lever.sh, batch_lever.sh): a throw-away cluster named
# $1 holding make bench's data set (1,000 companies x 100 use cases, 100,000 consent requests),
# migrated by the release build, loaded with COPY and analysed. Leaves its URL in $db and removes
# the cluster and the data files on exit.
# shellcheck shell=bash
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/common.sh
lever_work=$(mktemp -d); lever_dir=$(cluster_dir "$1-$$")
trap 'scripts/pg.sh stop "$lever_dir" >/dev/null 2>&1 || true; rm -rf "$lever_work" "$lever_dir"' EXIT
python3 scripts/bench/gen_data.py "$lever_work" 1000 100 100000 >/dev/null
lever_admin=$(scripts/pg.sh start "$lever_dir")
db=${lever_admin%/postgres}/consent_bench
psql "$lever_admin" -qc "CREATE DATABASE consent_bench"
APP_ENV=development APP__DATABASE__URL="$db" "${CARGO_TARGET_DIR:-target}/release/consent-api" migrate >/dev/null 2>&1
sed "s|@DIR@|$lever_work|g" scripts/bench/load.sql | psql "$db" -q -v ON_ERROR_STOP=1
psql "$db" -qc "VACUUM ANALYZE"
