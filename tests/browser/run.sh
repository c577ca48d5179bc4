#!/usr/bin/env bash
# Runs docs_ui.py with Python Playwright, pinned, from a virtualenv under target/ (created once),
# against the system's Chromium: Playwright's own browsers are never downloaded.
# Usage: tests/browser/run.sh BASE_URL API_KEY EXPECTED_TEXT...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PW_VERSION=1.56.0
venv=${PW_VENV:-$root/target/playwright/venv-$PW_VERSION}
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
if ! "$venv/bin/python" -c "import playwright, importlib.metadata as m; assert m.version('playwright') == '$PW_VERSION'" 2>/dev/null; then
  echo "installing playwright $PW_VERSION into $venv" >&2
  # Concurrent runs: one installs, the others wait.
  mkdir -p "$(dirname "$venv")"
  exec 9>"$venv.lock"
  flock 9
  if ! "$venv/bin/python" -c "import playwright" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "playwright==$PW_VERSION"
  fi
  flock -u 9
fi
# axe-core (npm, pinned), for the console's accessibility check: installed once under target/,
# handed to the script as AXE_JS; when npm is missing the script reports the check as skipped.
AXE_VERSION=4.10.3
axe_dir=$root/target/axe-core-$AXE_VERSION
case "${BROWSER_SCRIPT:-}" in console_ui.py | console_oidc_ui.py) wants_axe=1 ;; *) wants_axe= ;; esac
if [ -n "$wants_axe" ] && command -v npm >/dev/null; then
  if [ ! -f "$axe_dir/node_modules/axe-core/axe.min.js" ]; then
    mkdir -p "$axe_dir"
    exec 8>"$axe_dir.lock"
    flock 8
    [ -f "$axe_dir/node_modules/axe-core/axe.min.js" ] ||
      npm install --silent --no-audit --no-fund --prefix "$axe_dir" "axe-core@$AXE_VERSION" >&2
    flock -u 8
  fi
  export AXE_JS=$axe_dir/node_modules/axe-core/axe.min.js
fi
# BROWSER_SCRIPT: another script of this folder (console_ui.py, console_oidc_ui.py); default docs_ui.py
exec "$venv/bin/python" "$here/${BROWSER_SCRIPT:-docs_ui.py}" "$@"
