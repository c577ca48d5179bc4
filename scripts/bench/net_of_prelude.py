#!/usr/bin/env python3
"""A results.tsv line for SCENARIO_net from SCENARIO's pgbench run (round ROUND): its rate without
the prelude SELECT that makes the binds (pgbench has no strings), from pgbench -r's per-statement
latencies: requests x (all statements' latency / the creation statements' latency), latencies x
the inverse. An estimate (on a CPU-bound machine a statement's latency is about its share of the
CPU); the raw line stays next to it.

  net_of_prelude.py RESULTS_TSV SCENARIO ROUND PGBENCH_OUTPUT
"""
import sys

results, scenario, rnd, output = sys.argv[1:5]
latencies = []
for line in open(output):
    parts = line.split()
    # per-statement lines: "<latency> <failures> <statement text>"; meta-commands start with '\'
    if len(parts) >= 3 and parts[2] != "\\set" and not parts[2].startswith("\\"):
        try:
            latency, _failures = float(parts[0]), int(parts[1])
        except ValueError:
            continue
        latencies.append(latency)
rows = [l.rstrip("\n").split("\t") for l in open(results)]
mine = [r for r in rows if r[0] == scenario and r[1] == rnd and r[2] == "pgbench"]
if len(latencies) < 2 or not mine:
    sys.exit(0)
total, prelude = sum(latencies), latencies[0]
factor = total / (total - prelude)
r = list(mine[-1])
r[0] = scenario + "_net"
r[3] = str(int(int(r[3]) * factor))
r[7] = str(int(int(r[7]) / factor))
r[8] = str(int(int(r[8]) / factor))
print("\t".join(r))
