#!/usr/bin/env bash
# Fails if a log of the end-to-end tests contains a CPF the tests used: each 11-digit CPF listed in
# tests/personal-data-canaries.txt, as digits (52998224725) or masked (529.982.247-25). The masked
# form the service shows (***.982.247-**) is not a CPF and is not looked for.
#
#   scripts/check-personal-data.sh                  every file in target/e2e-logs
#   scripts/check-personal-data.sh --newer FILE     only those written after FILE (one run's)
#
# Prints the file, line number and which test CPF, never the line itself.
set -euo pipefail
source "$(dirname "$0")/common.sh"
root=$(repo_root)
logs="$root/target/e2e-logs"
canaries="$root/tests/personal-data-canaries.txt"

newer=()
if [ "${1:-}" = "--newer" ]; then
  [ -n "${2:-}" ] || { echo "usage: $0 [--newer FILE]" >&2; exit 2; }
  newer=(-newer "$2")
fi

patterns=$(mktemp)
trap 'rm -f "$patterns"' EXIT
count=0
while IFS= read -r line; do
  cpf=${line%%#*}
  cpf=${cpf//[[:space:]]/}
  [ -z "$cpf" ] && continue
  if ! [[ "$cpf" =~ ^[0-9]{11}$ ]]; then
    echo "error: $canaries: '$cpf' is not 11 digits" >&2
    exit 2
  fi
  printf '%s\n%s.%s.%s-%s\n' "$cpf" "${cpf:0:3}" "${cpf:3:3}" "${cpf:6:3}" "${cpf:9:2}" >>"$patterns"
  count=$((count + 1))
done <"$canaries"
[ "$count" -gt 0 ] || { echo "error: no CPF in $canaries" >&2; exit 2; }

if [ ! -d "$logs" ]; then
  echo "personal data: no end-to-end logs to check"
  exit 0
fi
files=0
leaks=0
while IFS= read -r -d '' file; do
  files=$((files + 1))
  # -o: one match per line, so the report names the CPF without quoting the rest of the line
  if hits=$(grep -noF -f "$patterns" -- "$file"); then
    while IFS= read -r hit; do
      echo "personal data: ${file#"$root"/}:${hit%%:*}: contains the test CPF ${hit#*:}" >&2
      leaks=$((leaks + 1))
    done <<<"$hits"
  fi
done < <(find "$logs" -type f "${newer[@]}" -print0)

if [ "$leaks" -gt 0 ]; then
  echo "personal data: FAILED: $leaks occurrence(s) of test CPFs in the logs above" >&2
  exit 1
fi
echo "personal data: no test CPF in $files log file(s) ($count CPFs, digits and masked)"
