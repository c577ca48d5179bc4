#!/usr/bin/env bash
# oha (the open-loop load generator of `make bench`) for scripts/bench.sh: prints the path of a
# usable oha binary, installing it first if needed with `cargo install oha --locked` into
# target/bench/tools/ (git-ignored), once; later runs reuse it. An oha already on PATH is used as
# it is. Feature native-tls instead of the default rustls: it links the system's OpenSSL
# (libssl-dev, pkg-config) instead of compiling aws-lc (C, cmake); oha does not build without a
# TLS feature. Time-boxed (BENCH_OHA_INSTALL_TIMEOUT seconds, 600): its build folder,
# target/bench/tools/build, is kept until the install succeeds, so an install cut short by the
# time box goes on where it stopped at the next run. Any failure prints one line with the reason
# on stderr and exits non-zero.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tools=$root/target/bench/tools
version=1.16.0
timeout_s=${BENCH_OHA_INSTALL_TIMEOUT:-600}
if command -v oha >/dev/null 2>&1; then command -v oha; exit 0; fi
if [ -x "$tools/bin/oha" ]; then echo "$tools/bin/oha"; exit 0; fi
mkdir -p "$tools"
started=$(date +%s)
if ! CARGO_TARGET_DIR=$tools/build timeout "$timeout_s" cargo install oha --version "$version" --locked \
    --no-default-features --features native-tls --root "$tools" > "$tools/install.log" 2>&1; then
  echo "cargo install oha $version failed or took over $timeout_s s (an install cut short resumes at the next run; see $tools/install.log)" >&2
  exit 1
fi
rm -rf "$tools/build"
echo "oha $version installed in $(( $(date +%s) - started )) s" | tee -a "$tools/install.log" >&2
echo "$tools/bin/oha"
