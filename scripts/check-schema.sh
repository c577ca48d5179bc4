#!/usr/bin/env bash
# crates/adapters/postgres/src/schema.rs is generated, never edited by hand: it is what
# `diesel print-schema` writes for a database migrated with migrations/ (by `consent-api migrate`,
# the runner production uses), with the deliberate differences of
# crates/adapters/postgres/schema.patch applied (diesel.toml's `patch_file`), as the Rust
# registry server keeps its own.
#
#   scripts/check-schema.sh          (`make check-schema`, CI) fails, printing the diff, when
#                                    schema.rs is not what the migrations generate
#   scripts/check-schema.sh --write  (`make schema`) rewrites schema.rs; after adding a
#                                    migration, run it and commit the result
#
# A throw-away PostgreSQL cluster is started and removed. Needs diesel_cli (its version pinned
# below, as print-schema's output differs between versions): on PATH, or installed by this
# script into ~/.cache/consent-api/tools (a few minutes, once per machine; CI reuses it).
set -euo pipefail
source "$(dirname "$0")/common.sh"
root=$(repo_root)
cd "$root"
require cargo "install Rust (https://rustup.rs)"
require psql "install PostgreSQL 15 (Debian: apt-get install postgresql)"

write=false
[ "${1:-}" = --write ] && write=true

DIESEL_CLI_VERSION=2.3.14
tools=${CONSENT_API_TOOLS:-$HOME/.cache/consent-api/tools}
diesel=$(command -v diesel || true)
if [ -z "$diesel" ] || ! "$diesel" --version 2>/dev/null | grep -q "$DIESEL_CLI_VERSION"; then
  diesel=$tools/bin/diesel
  if ! { [ -x "$diesel" ] && "$diesel" --version | grep -q "$DIESEL_CLI_VERSION"; }; then
    # --debug: an unoptimized build takes a fraction of a release build's minutes, and
    # print-schema's speed does not matter
    echo "installing diesel_cli $DIESEL_CLI_VERSION (postgres only) into $tools: a few minutes, once"
    cargo install --quiet --locked --debug --root "$tools" diesel_cli --version "=$DIESEL_CLI_VERSION" \
      --no-default-features --features postgres
  fi
fi

cargo build --quiet --bin consent-api
dir=$(cluster_dir "schema-$$")
generated=$(mktemp)
trap 'scripts/pg.sh stop "$dir"; rm -rf "$dir" "$dir.migrate.log" "$generated"' EXIT
admin=$(scripts/pg.sh start "$dir")
db="${admin%/postgres}/schema_check"
psql "$admin" -qc "CREATE DATABASE schema_check" >/dev/null
APP_ENV=test APP__DATABASE__URL="$db" target/debug/consent-api migrate >"$dir.migrate.log" 2>&1 \
  || { cat "$dir.migrate.log" >&2; exit 1; }

schema=crates/adapters/postgres/src/schema.rs
(cd crates/adapters/postgres && "$diesel" print-schema --database-url "$db") > "$generated"
if $write; then
  cp "$generated" "$schema"
  echo "wrote $schema"
elif ! diff -u "$schema" "$generated"; then
  echo "error: $schema is not what the migrations generate (the diff above: - in the file, + generated)." >&2
  echo "       Regenerate it with \`make schema\` and commit it; a deliberate difference goes into crates/adapters/postgres/schema.patch." >&2
  exit 1
else
  echo "schema.rs: what the migrations generate (diesel_cli $DIESEL_CLI_VERSION, schema.patch applied)"
fi
