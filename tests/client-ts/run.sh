#!/usr/bin/env bash
# The generated-TypeScript-client test's helper (tests/tests/api/generated_client.rs runs it; it
# can also be run by hand against any live server):
#
#   bash tests/client-ts/run.sh OPENAPI_JSON BASE_URL API_KEY
#
# 1. installs the pinned npm packages of package-lock.json (openapi-typescript, openapi-fetch,
#    typescript, @types/node) under target/client-ts/ with `npm ci`, once per lock file; later
#    runs use them as they are, offline;
# 2. generates the types (schema.d.ts) from the OpenAPI document saved from the live
#    /openapi.json with openapi-typescript;
# 3. compiles walkthrough.ts against them with `tsc --strict` (any type error fails);
# 4. runs the README walk-through through openapi-fetch against BASE_URL with API_KEY: sync,
#    list, create active and pending, read, HashConsulta, register a URL. Prints one JSON line.
# Exit status 0 when all of that works; 2 when Node.js or npm is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 3 ] || { echo "usage: $0 OPENAPI_JSON BASE_URL API_KEY" >&2; exit 64; }
openapi=$1 base_url=$2 api_key=$3

missing() {
  echo "error: the TypeScript client test needs $1 (Debian: apt-get install nodejs npm); .ci/run installs it in CI" >&2
  exit 2
}
command -v node >/dev/null 2>&1 || missing "Node.js"
command -v npm >/dev/null 2>&1 || missing "npm"

work=${CLIENT_TS_DIR:-$root/target/client-ts}
mkdir -p "$work"
lock_sum=$(sha256sum "$here/package-lock.json" | cut -c1-16)
deps=$work/deps-$lock_sum
# One installer at a time (two test runs may share the tree).
exec 9>"$work/.lock"
flock 9
if [ ! -e "$deps/.installed" ]; then
  echo "installing the pinned npm packages (package-lock.json) into $deps" >&2
  rm -rf "$deps"
  mkdir -p "$deps"
  cp "$here/package.json" "$here/package-lock.json" "$deps/"
  (cd "$deps" && npm ci --no-audit --no-fund --loglevel=error >&2) \
    || { echo "error: npm ci failed (is the npm registry reachable?)" >&2; exit 2; }
  touch "$deps/.installed"
fi
flock -u 9

out=$(mktemp -d "$work/run-XXXXXX")
trap 'rm -rf "$out"' EXIT
cp "$here/walkthrough.ts" "$here/tsconfig.json" "$here/package.json" "$out/"
ln -s "$deps/node_modules" "$out/node_modules"
start=$(date +%s.%N)
"$deps/node_modules/.bin/openapi-typescript" "$openapi" --output "$out/schema.d.ts" >&2
"$deps/node_modules/.bin/tsc" -p "$out/tsconfig.json" --strict >&2
end=$(date +%s.%N)
echo "generate + tsc --strict: $(python3 -c "print(f'{$end - $start:.2f}')" 2>/dev/null || echo "?") s" >&2
node "$out/build/walkthrough.js" "$base_url" "$api_key"
