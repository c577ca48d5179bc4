#!/usr/bin/env bash
# `make check`: the inner loop. The tests that need no database (unit tests, the mock-backed
# service tests, the HTTP layer, the simulator, the webhook sender; nextest profile `check` in
# .config/nextest.toml), with no PostgreSQL started and TEST_DATABASE_URL unset, so a test that
# reaches for one fails instead of finding one; then the paths docs/architecture.md names.
# Extra arguments go to cargo nextest (e.g. a test filter).
set -euo pipefail
source "$(dirname "$0")/common.sh"
root=$(repo_root)
cd "$root"
require cargo "install Rust (https://rustup.rs)"
require python3 "install Python 3"

status=0
scripts/check-doc-paths.sh || status=1
if cargo nextest --version >/dev/null 2>&1; then
  env -u TEST_DATABASE_URL cargo nextest run --workspace --profile check --no-fail-fast "$@" || status=$?
else
  # Without nextest: the same selection by target (every crate's unit tests; the integration-test
  # binaries of every crate but the two whose tests/ need PostgreSQL).
  env -u TEST_DATABASE_URL cargo test --workspace --exclude consent-testkit --exclude consent-postgres --no-fail-fast "$@" || status=$?
  env -u TEST_DATABASE_URL cargo test -p consent-testkit -p consent-postgres --lib --no-fail-fast "$@" || status=$?
fi
exit "$status"
