# Sourced by the benchmark scripts (bench-scale.sh, bench/status_work.sh): waiting for a line a
# process prints, and the CPU time of a process or of a PostgreSQL cluster.
# shellcheck shell=bash

# wait_line FILE PREFIX: waits up to 30 s for a line of FILE starting with PREFIX; prints the rest.
wait_line() {
  local file=$1 prefix=$2 i
  for i in $(seq 1 300); do
    if grep -q "^$prefix" "$file" 2>/dev/null; then grep -m1 "^$prefix" "$file" | sed "s|^$prefix||"; return 0; fi
    sleep 0.1
  done
  echo "error: '$prefix' never printed; see $file" >&2; exit 1
}

# proc_cpu PID: user + system clock ticks of one process (0 once it is gone).
proc_cpu() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# pg_cpu: clock ticks of the cluster whose postmaster is $pg_pid, its children (live and ended)
# included.
pg_cpu() {
  local total child
  total=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pg_pid/stat")
  for child in $(pgrep -P "$pg_pid"); do total=$((total + $(proc_cpu "$child"))); done
  echo "$total"
}
