#!/usr/bin/env bash
# Issue 24's stored tree, measured: a request's inclusion proof (GET .../{id}/provas) in a company
# log of 10^3, 10^5 and 10^6 entries (made with SQL; the stored tree built by the checkpoint job),
# from the stored tree and from the tree rebuilt from the entries (the path before the stored tree,
# which the service still takes while a log's stored tree is being caught up). The end-to-end test
# `audit_scale` does the work and, with AUDIT_SCALE_TIMINGS=1, prints the medians of 7 calls each
# and the rows of the log's tables one proof read; this script runs it at each size and prints
# those lines (docs/performance-history.md, "Issue 24: proofs at size").
#
#   TEST_DATABASE_URL=$(scripts/pg.sh start /var/tmp/bench-pg) scripts/bench/audit_proofs.sh
#
# Needs `cargo build --workspace --bins` and cargo-nextest (as `make test`). Not part of make bench.
set -euo pipefail
source "$(dirname "$0")/../common.sh"
cd "$(repo_root)"
: "${TEST_DATABASE_URL:?start a PostgreSQL: export TEST_DATABASE_URL=\$(scripts/pg.sh start DIR)}"
for n in ${AUDIT_SCALE_SIZES:-1000 100000 1000000}; do
  AUDIT_SCALE_ENTRIES=$n AUDIT_SCALE_TIMINGS=1 cargo nextest run -p consent-testkit --profile scale --no-capture \
    -E 'test(/^audit_scale::/)' 2>&1 | grep '^AUDIT_SCALE ' || { echo "size $n: the test failed" >&2; exit 1; }
done
