#!/usr/bin/env bash
# The generated-client test's helper (tests/tests/api/generated_client.rs runs it; it can also be
# run by hand against any live server):
#
#   bash tests/client-gen/run.sh OPENAPI_JSON BASE_URL API_KEY
#
# 1. installs openapi-python-client (pinned: OPC_VERSION) into a virtualenv under
#    target/client-gen/ once (about 30 s from PyPI); later runs use it as it is, offline;
# 2. generates a Python client from the OpenAPI document saved from the live /openapi.json,
#    failing on any generator warning (tests/client-gen/config.yaml);
# 3. imports the generated package and calls GET /api/casos-de-uso through it (call.py).
# Exit status 0 when all of that works; 2 when Python or its venv/pip module is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 3 ] || { echo "usage: $0 OPENAPI_JSON BASE_URL API_KEY" >&2; exit 64; }
openapi=$1 base_url=$2 api_key=$3

OPC_VERSION=0.29.1
missing() {
  echo "error: the generated-client test needs $1 (Debian: apt-get install $2); .ci/run installs it in CI" >&2
  exit 2
}
command -v python3 >/dev/null 2>&1 || missing "Python 3" "python3 python3-venv"
python3 -c 'import venv, ensurepip' 2>/dev/null || missing "Python's venv and pip modules" "python3-venv"

work=${CLIENT_GEN_DIR:-$root/target/client-gen}
venv=$work/venv-$OPC_VERSION
mkdir -p "$work"
# One installer at a time (two test runs may share the tree).
exec 9>"$work/.lock"
flock 9
if ! "$venv/bin/openapi-python-client" --version 2>/dev/null | grep -q "$OPC_VERSION"; then
  echo "installing openapi-python-client $OPC_VERSION into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" || missing "Python's venv module" "python3-venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "openapi-python-client==$OPC_VERSION" \
    || { echo "error: pip could not install openapi-python-client==$OPC_VERSION (is PyPI reachable?)" >&2; exit 2; }
fi
flock -u 9

out=$(mktemp -d "$work/run-XXXXXX")
trap 'rm -rf "$out"' EXIT
start=$(date +%s.%N)
"$venv/bin/openapi-python-client" generate \
  --path "$openapi" \
  --meta none \
  --output-path "$out/consent_api_client" \
  --config "$here/config.yaml" \
  --fail-on-warning >&2
end=$(date +%s.%N)
echo "generator: $(python3 -c "print(f'{$end - $start:.2f}')") s" >&2

# The generated package's own dependencies (httpx, attrs) come with the generator.
PYTHONPATH=$out "$venv/bin/python" "$here/call.py" "$base_url" "$api_key"
