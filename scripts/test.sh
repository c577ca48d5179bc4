#!/usr/bin/env bash
# `make test`: every test, the PostgreSQL-backed ones included, against a throw-away cluster
# started here and stopped on exit; all but the scale tests, which `make test-scale` runs
# (NEXTEST_PROFILE=scale). The tiers are the profiles of .config/nextest.toml. Extra arguments go
# to cargo nextest (e.g. a test filter, which narrows the profile's selection).
set -euo pipefail
source "$(dirname "$0")/common.sh"
root=$(repo_root)
cd "$root"
require cargo "install Rust (https://rustup.rs)"
require python3 "install Python 3"

# Build once: the binaries the end-to-end tests start, and every test target.
cargo build --workspace --bins --quiet

dir=$(cluster_dir "test-$$")
# Logs written after this file are this run's (see the personal-data check below).
started=$(mktemp)
trap 'scripts/pg.sh stop "$dir"; rm -rf "$dir"; rm -f "$started"' EXIT
TEST_DATABASE_URL=$(scripts/pg.sh start "$dir")
export TEST_DATABASE_URL
echo "test cluster: $TEST_DATABASE_URL"
# Every statement logged, with its session's application_name: the statement-scope check below
# reads the service's (`consent-api`) from the cluster's log. The log holds the tests' data and
# goes with the cluster on exit.
psql "$TEST_DATABASE_URL" -qc "ALTER SYSTEM SET log_statement = 'all'" \
  -c "ALTER SYSTEM SET log_line_prefix = '%m [%p] %a: '" -c "SELECT pg_reload_conf()" >/dev/null

profile=${NEXTEST_PROFILE:-default}
status=0
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --profile "$profile" --no-fail-fast "$@" || status=$?
  # nextest does not run doctests (the domain crate's examples, src/lib.rs); `cargo test` below
  # does (once: in `make test`, not again in `make test-scale`).
  [ "$profile" = scale ] || cargo test --workspace --doc --no-fail-fast || status=$?
elif [ "$profile" = scale ]; then
  cargo test -p consent-testkit --test api --no-fail-fast "$@" -- audit_scale:: || status=$?
else
  cargo test --workspace --no-fail-fast "$@" -- --skip audit_scale:: || status=$?
fi

# Whatever the tests' outcome: every statement the service sent on a tenant table named its
# company (issue 23, part 3; scripts/statement_scope.py), but those allowed with their reason.
scripts/statement-scope-check.sh "$TEST_DATABASE_URL" "$dir/postgres.log" || status=1

# Whatever the tests' outcome: no CPF used by the tests (tests/personal-data-canaries.txt) may
# appear in any log this run wrote to target/e2e-logs (the service's and the simulator's).
scripts/check-personal-data.sh --newer "$started" || status=1
exit "$status"
