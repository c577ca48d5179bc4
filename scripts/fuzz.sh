#!/usr/bin/env bash
# `make fuzz`: runs each cargo-fuzz target of fuzz/ (libFuzzer, AddressSanitizer) for FUZZ_SECONDS
# (default 30) seconds, starting from the committed corpus fuzz/corpus/<target>/. New inputs go
# to target/fuzz-corpus/<target>/ (not committed); a crash stops the run and leaves its input in
# fuzz/artifacts/<target>/. Not part of `make test` nor CI: it is slow to build and random.
#
# cargo-fuzz needs nightly's `-Z` flags; on the stable toolchain RUSTC_BOOTSTRAP=1 lets them
# through. One target by hand: `RUSTC_BOOTSTRAP=1 cargo fuzz run cpf_parse -- -max_total_time=60`.
# Targets: FUZZ_TARGETS="cpf_parse cnpj_parse consent_body" (the default: all of them).
set -euo pipefail
source "$(dirname "$0")/common.sh"
root=$(repo_root)
cd "$root"
require cargo "install Rust (https://rustup.rs)"
command -v cargo-fuzz >/dev/null 2>&1 || cargo install --locked cargo-fuzz

seconds=${FUZZ_SECONDS:-30}
targets=${FUZZ_TARGETS:-"cpf_parse cnpj_parse consent_body"}
export RUSTC_BOOTSTRAP=1
for t in $targets; do
  mkdir -p "target/fuzz-corpus/$t"
  echo "== $t: ${seconds}s"
  cargo fuzz run "$t" "target/fuzz-corpus/$t" "fuzz/corpus/$t" -- \
    -max_total_time="$seconds" -print_final_stats=1
done
echo "fuzzing done: no target crashed"
