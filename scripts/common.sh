# Shared by the make scripts: where the local PostgreSQL clusters live.
# shellcheck shell=bash

repo_root() { cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd; }

# A folder for a cluster named $1. In the work tree (.pg/, git-ignored) when the cluster's owner
# can reach it; as root the cluster runs as `postgres`, which often cannot enter a private
# checkout (e.g. one made by mktemp -d), so it goes under /var/tmp, keyed by the checkout's path.
cluster_dir() {
  local name=$1 root
  root=$(repo_root)
  if [ "$(id -u)" -ne 0 ] || runuser -u postgres -- test -x "$root" 2>/dev/null; then
    echo "$root/.pg/$name"
  else
    echo "/var/tmp/consent-api-$(printf '%s' "$root" | sha1sum | cut -c1-12)/$name"
  fi
}

require() {
  command -v "$1" >/dev/null 2>&1 || { echo "error: '$1' is needed: $2" >&2; exit 1; }
}
