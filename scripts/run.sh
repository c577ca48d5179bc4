#!/usr/bin/env bash
# `make run`: a local PostgreSQL, the PGCC simulator with a demo seed, a demo company and key,
# and the API on 127.0.0.1:8080. Ctrl-C stops everything it started.
set -euo pipefail
source "$(dirname "$0")/common.sh"
root=$(repo_root)
cd "$root"
require cargo "install Rust (https://rustup.rs)"
require python3 "install Python 3"
require psql "install PostgreSQL 15 (Debian: apt-get install postgresql)"

cargo build --bins --quiet
bin=target/debug

dir=$(cluster_dir dev)
admin=$(scripts/pg.sh start "$dir")
sim_pid=""
cleanup() {
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
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
"$bin/consent-api" migrate

demo_cnpj=11222333000181
company=$(psql "$db_url" -tAc "SELECT id FROM empresas WHERE cnpj = '$demo_cnpj'")
[ -n "$company" ] || company=$("$bin/consent-api" company create --nome "Empresa Demo" --cnpj "$demo_cnpj")
key=$("$bin/consent-api" api-key issue --empresa "$company" 2>/dev/null)
port=${APP__SERVER__PORT:-8080}

cat <<TXT

  Demo company $company, API key (new at every start):
    $key

  Try it:
    curl -s -X POST -H 'Api-Key: $key' http://127.0.0.1:$port/api/casos-de-uso/sincronizar
    curl -s -H 'Api-Key: $key' http://127.0.0.1:$port/api/casos-de-uso
  OpenAPI: http://127.0.0.1:$port/openapi.json   PGCC simulator: http://127.0.0.1:$sim_port
  Ctrl-C stops the API, the simulator and PostgreSQL.

TXT
"$bin/consent-api" serve
