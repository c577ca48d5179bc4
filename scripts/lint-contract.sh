#!/usr/bin/env bash
# `make lint-contract` (and CI): Spectral with `spectral:oas` and the OWASP API Security ruleset
# over the LIVE `/openapi.json` of a `consent-api serve` started here (its own PostgreSQL cluster,
# no background jobs, a PGCC URL that is never called), with the ruleset file `.spectral.yaml` at
# the repository root. Fails on any error; warnings are printed. Every rule turned off or
# downgraded is listed in `.spectral.yaml` with its reason.
#
# The npm packages are pinned by tests/spectral/package-lock.json and installed with `npm ci`
# under target/spectral/, once per lock file (later runs use them as they are, offline).
# Extra arguments go to `spectral lint` (e.g. --format json). The document is kept as
# target/spectral/openapi.json.
set -euo pipefail
source "$(dirname "$0")/common.sh"
# wait_line
source "$(dirname "$0")/bench/measure.sh"
root=$(repo_root)
cd "$root"
require cargo "install Rust (https://rustup.rs)"
require node "apt-get install nodejs (.ci/run installs it)"
require npm "apt-get install npm (.ci/run installs it)"

spec_dir=$root/tests/spectral
work=${SPECTRAL_DIR:-$root/target/spectral}
mkdir -p "$work"
lock_sum=$(sha256sum "$spec_dir/package-lock.json" | cut -c1-16)
deps=$work/deps-$lock_sum
exec 9>"$work/.lock"
flock 9
if [ ! -e "$deps/.installed" ]; then
  echo "installing the pinned npm packages (tests/spectral/package-lock.json) into $deps" >&2
  rm -rf "$deps"
  mkdir -p "$deps"
  cp "$spec_dir/package.json" "$spec_dir/package-lock.json" "$deps/"
  (cd "$deps" && npm ci --no-audit --no-fund --loglevel=error >&2) \
    || { echo "error: npm ci failed (is the npm registry reachable?)" >&2; exit 2; }
  touch "$deps/.installed"
fi
flock -u 9

cargo build --bins --quiet -p consent-api
bin=${CARGO_TARGET_DIR:-$root/target}/debug

tmp=$(mktemp -d)
dir=$(cluster_dir "spectral-$$")
api_pid=""
cleanup() {
  [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null || true
  scripts/pg.sh stop "$dir"; rm -rf "$dir" "$tmp"
}
trap cleanup EXIT
admin=$(scripts/pg.sh start "$dir")

export APP_ENV=test
export APP__DATABASE__URL="$admin"
# never called: no job runs and no request reaches a route that calls the PGCC
export APP__PGCC__BASE_URL=http://127.0.0.1:9
export APP__SERVER__HOST=127.0.0.1 APP__SERVER__PORT=0
export APP__WORKERS__RUN_IN_SERVE=false
"$bin/consent-api" migrate 2>/dev/null
"$bin/consent-api" serve > "$tmp/api.out" 2> "$work/consent-api.log" &
api_pid=$!
api_url=$(wait_line "$tmp/api.out" "consent-api listening on ")

node -e 'fetch(process.argv[1]).then(async r => { if (!r.ok) throw new Error(`HTTP ${r.status}`);
  require("fs").writeFileSync(process.argv[2], Buffer.from(await r.arrayBuffer())); })' \
  "$api_url/openapi.json" "$work/openapi.json"
echo "spectral (spectral:oas + OWASP API Security 2023, .spectral.yaml) against $api_url/openapi.json" >&2
# the ruleset names its npm rulesets by package name: found through NODE_PATH
NODE_PATH="$deps/node_modules" "$deps/node_modules/.bin/spectral" lint "$work/openapi.json" \
  --ruleset "$root/.spectral.yaml" \
  --fail-severity error \
  "$@"
