#!/usr/bin/env bash
# npm's oidc-provider (panva's OpenID Certified implementation), pinned, installed once under
# target/oidc-provider-<version>/ for the console's sign-in tests (tests/tests/api/console_oidc.rs
# starts tests/oidc/provider.mjs with it). Prints the directory. Called by .ci/run and by the
# test itself (a no-op once installed). 8.x: the line that supports Node.js 20 (Debian's).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
OIDC_PROVIDER_VERSION=8.8.1
dir=${OIDC_PROVIDER_DIR:-$root/target/oidc-provider-$OIDC_PROVIDER_VERSION}
if [ ! -f "$dir/node_modules/oidc-provider/package.json" ]; then
  command -v npm >/dev/null || { echo "npm is missing: install Node.js and npm" >&2; exit 1; }
  mkdir -p "$dir"
  # one install at a time (tests run in parallel)
  exec 8>"$dir.lock"
  flock 8
  [ -f "$dir/node_modules/oidc-provider/package.json" ] ||
    npm install --silent --no-audit --no-fund --prefix "$dir" "oidc-provider@$OIDC_PROVIDER_VERSION" >&2
fi
echo "$dir"
