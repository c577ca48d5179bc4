#!/usr/bin/env bash
# Every path a map document names in backticks must exist (`make check`, `make lint`, CI).
#
#   scripts/check-doc-paths.sh [DOC...]     default: docs/architecture.md
#
# A backticked token is taken for a path when it is made of path characters only and contains a
# `/` or ends in a file extension (`crates/app/src/wiring.rs`, `dto/`, `settings.rs`). It exists
# when it names a file or folder from the repository's root, or is the tail of one (`routes/grants.rs`
# for crates/delivery/http/src/routes/grants.rs, `settings.rs` for crates/app/src/settings.rs).
# HTTP paths (`/api/...`) and Rust paths (`a::b`) are not file paths and are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- docs/architecture.md
python3 - "$@" <<'PY'
import os, re, subprocess, sys

files = subprocess.run(
    ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
    check=True, capture_output=True, text=True,
).stdout.split()
files = [f for f in files if os.path.exists(f)]
known = set(files)
for f in files:
    parts = f.split("/")
    for i in range(1, len(parts)):
        known.add("/".join(parts[:i]) + "/")

def exists(token):
    want = token.rstrip("/") + ("/" if token.endswith("/") else "")
    if want in known or os.path.exists(token):
        return True
    return any(k == want or k.endswith("/" + want) for k in known)

path_chars = re.compile(r"^[A-Za-z0-9_.\-/<>]+$")
extension = re.compile(r"\.(rs|md|toml|sql|sh|py|json|ya?ml|txt|html|css|js)$")
missing = 0
for doc in sys.argv[1:]:
    with open(doc, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            for token in re.findall(r"`([^`\s]+)`", line):
                if token.startswith("/") or "::" in token or not path_chars.match(token):
                    continue
                if "<" in token:  # a pattern such as routes/<resource>.rs: its folder must exist
                    token = token[: token.index("<")]
                    token = token[: token.rfind("/") + 1] if "/" in token else ""
                    if not token:
                        continue
                elif "/" not in token and not extension.search(token):
                    continue
                if not exists(token):
                    print(f"{doc}:{n}: `{token}` names no file or folder of the repository", flush=True)
                    missing += 1
if missing:
    print(f"{missing} path(s) named in the docs do not exist: fix the doc (or the path)", file=sys.stderr)
    sys.exit(1)
print(f"doc paths: every path named in {', '.join(sys.argv[1:])} exists")
PY
