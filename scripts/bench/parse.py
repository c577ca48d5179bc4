#!/usr/bin/env python3
"""One line of results.tsv from a wrk output (its WRKJSON line, see common.lua) or from pgbench's
per-transaction logs (latency = third field, microseconds).

  parse.py wrk|pgbench NAME ROUND OUTPUT PGBENCH_LOG_PREFIX APP_CPU_S PG_CPU_S PEAK_RSS_KB SECONDS
"""
import glob, json, sys

kind, name, rnd, output, prefix, app_cpu, pg_cpu, rss, seconds = sys.argv[1:10]


def pct(sorted_values, p):
    if not sorted_values:
        return 0
    return sorted_values[min(len(sorted_values) - 1, int(round(p / 100 * (len(sorted_values) - 1))))]


if kind == "wrk":
    line = next((l for l in open(output) if l.startswith("WRKJSON ")), None)
    if line is None:
        print(f"{name}\t{rnd}\t0\t{seconds}\t0\t0\t0\t0\t{app_cpu}\t{pg_cpu}\t{rss}", end="\n")
        sys.exit(0)
    r = json.loads(line[len("WRKJSON "):])
    requests, secs = r["requests"], r["duration_us"] / 1e6
    non2xx, sock, p50, p99 = r["non2xx"], r["socket_errors"], r["p50_us"], r["p99_us"]
else:
    lat = []
    for f in glob.glob(prefix + ".*"):
        for l in open(f):
            parts = l.split()
            if len(parts) >= 3:
                lat.append(int(parts[2]))
    lat.sort()
    text = open(output).read()
    failed = 0
    for l in text.splitlines():
        if l.startswith("number of failed transactions:"):
            failed = int(l.split(":")[1].split()[0])
    secs = float(seconds)
    for l in text.splitlines():  # pgbench's own measured duration when it prints one
        if l.startswith("duration:"):
            secs = float(l.split(":")[1].split()[0])
    requests, non2xx, sock, p50, p99 = len(lat), failed, 0, pct(lat, 50), pct(lat, 99)
print(f"{name}\t{rnd}\t{requests}\t{secs:.3f}\t{non2xx}\t{sock}\t{p50}\t{p99}\t{app_cpu}\t{pg_cpu}\t{rss}")
