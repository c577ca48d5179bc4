#!/usr/bin/env bash
# `make lint-migrations` (and CI): squawk, the linter of PostgreSQL migrations, over every
# migrations/*/up.sql, with the repository's .squawk.toml; any violation fails. A migration runs in
# a transaction (diesel's default) unless its metadata.toml says `run_in_transaction = false` (a
# CREATE INDEX CONCURRENTLY): each kind is checked as such. down.sql files are not checked: they
# are never run on a live database (docs/operations.md: restore a backup to go back).
# squawk is pinned (SQUAWK_VERSION) and installed once into a virtualenv under target/.
set -euo pipefail
source "$(dirname "$0")/common.sh"
root=$(repo_root)
cd "$root"
require python3 "install Python 3"

SQUAWK_VERSION=2.70.0
venv=${SQUAWK_VENV:-$root/target/squawk-$SQUAWK_VERSION}
if ! "$venv/bin/squawk" --version 2>/dev/null | grep -q "$SQUAWK_VERSION"; then
  echo "installing squawk-cli $SQUAWK_VERSION into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "squawk-cli==$SQUAWK_VERSION"
fi

in_transaction=(); outside=()
for dir in migrations/*/; do
  if grep -Eqs '^run_in_transaction *= *false' "${dir}metadata.toml"; then
    outside+=("${dir}up.sql")
  else
    in_transaction+=("${dir}up.sql")
  fi
done
status=0
"$venv/bin/squawk" --config .squawk.toml --assume-in-transaction "${in_transaction[@]}" || status=$?
if [ ${#outside[@]} -gt 0 ]; then
  "$venv/bin/squawk" --config .squawk.toml "${outside[@]}" || status=$?
fi
exit "$status"
