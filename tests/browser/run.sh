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
# BROWSER_SCRIPT: another script of this folder (console_ui.py); default docs_ui.py
exec "$venv/bin/python" "$here/${BROWSER_SCRIPT:-docs_ui.py}" "$@"
