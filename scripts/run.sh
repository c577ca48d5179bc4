#!/usr/bin/env bash
# `make run`: a local PostgreSQL, the PGCC simulator with a demo seed (127.0.0.1:$PGCC_SIM_PORT,
# default 8090; also a webhook receiver, /_sim/webhooks), a demo company with an integration key
# and a DPO (`auditor`) key, and the API on 127.0.0.1:8080 (APP__SERVER__PORT). While it runs,
# .run/development.toml holds its database's and simulator's URLs, which `consent-api` run from
# the checkout (APP_ENV development) reads. Ctrl-C stops everything it started.
set -euo pipefail
source "$(dirname "$0")/common.sh"
root=$(repo_root)
cd "$root"
require cargo "install Rust (https://rustup.rs)"
require python3 "install Python 3"
require psql "install PostgreSQL 15 (Debian: apt-get install postgresql)"

[ -x target/debug/consent-api ] || echo "Building the workspace (the first time: several minutes, no output until done)..."
cargo build --bins --quiet
bin=target/debug

dir=$(cluster_dir dev)
admin=$(scripts/pg.sh start "$dir")
sim_pid=""
local_run=.run/development.toml
cleanup() {
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  rm -f "$local_run"
  scripts/pg.sh stop "$dir"
}
trap cleanup EXIT INT TERM

db_url="${admin%/postgres}/consent_api"
psql "$admin" -tAc "SELECT 1 FROM pg_database WHERE datname = 'consent_api'" | grep -q 1 \
  || psql "$admin" -qc "CREATE DATABASE consent_api" >/dev/null

sim_port=${PGCC_SIM_PORT:-8090}
mkdir -p .run
"$bin/pgcc-sim" --port "$sim_port" --seed crates/pgcc-sim/seeds/demo.json > .run/pgcc-sim.log 2>&1 &
sim_pid=$!

# The service runs as a role that owns nothing; the cluster's superuser owns the tables, migrates
# and grants it what it needs (docs/security.md, "Least privilege").
psql "$admin" -tAc "SELECT 1 FROM pg_roles WHERE rolname = 'consent_app'" | grep -q 1 \
  || psql "$admin" -qc "CREATE ROLE consent_app LOGIN" >/dev/null
export APP_ENV=development
export APP__DATABASE__MIGRATION_URL="$db_url"
export APP__DATABASE__URL="${db_url/postgres@/consent_app@}"
export APP__PGCC__BASE_URL="http://127.0.0.1:$sim_port"
# For the command line run from this checkout in another terminal (crates/app/src/settings.rs):
# the same database and simulator, with no APP__ variable to export. Removed on exit.
cat > "$local_run" <<TOML
# Written by \`make run\` (scripts/run.sh) while it runs; removed when it stops.
[database]
url = "$APP__DATABASE__URL"
migration_url = "$APP__DATABASE__MIGRATION_URL"
[pgcc]
base_url = "http://127.0.0.1:$sim_port"
TOML
"$bin/consent-api" migrate

demo_cnpj=11222333000181
company=$(psql "$db_url" -tAc "SELECT id FROM empresas WHERE cnpj = '$demo_cnpj'")
[ -n "$company" ] || company=$("$bin/consent-api" company create --nome "Empresa Demo" --cnpj "$demo_cnpj")
key=$("$bin/consent-api" api-key issue --empresa "$company" 2>/dev/null)
dpo_key=$("$bin/consent-api" api-key issue --empresa "$company" --escopos auditor 2>/dev/null)
port=${APP__SERVER__PORT:-8080}
api=http://127.0.0.1:$port
sim=http://127.0.0.1:$sim_port

cat <<TXT

  Demo company $company. Keys, new at every start:
    API key (integracao, consulta, webhooks):  $key
    DPO key (auditor, read only):              $dpo_key

  Walk-through (README): KEY=$key API=$api SIM=$sim
    curl -s -X POST -H 'Api-Key: $key' $api/api/casos-de-uso/sincronizar
    curl -s -H 'Api-Key: $key' $api/api/casos-de-uso
  Console (sign in with the DPO key):  $api/console
  Interactive docs:                    $api/docs   (OpenAPI: $api/openapi.json)
  PGCC simulator:                      $sim   (port: PGCC_SIM_PORT=$sim_port)
  Webhook receiver for the demo:       $sim/_sim/webhooks   (register it; GET lists what arrived)
  Command line from this checkout:     target/debug/consent-api ...   (finds this database by itself)
  Ctrl-C stops the API, the simulator and PostgreSQL.

TXT
"$bin/consent-api" serve
