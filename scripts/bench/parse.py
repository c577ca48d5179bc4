#!/usr/bin/env python3
"""One line of results.tsv from a wrk output (its WRKJSON line, see common.lua), an loadgen JSON output
(`--output-format json`), or pgbench's per-transaction logs (latency = third field, microseconds).

  parse.py wrk|loadgen|pgbench NAME ROUND OUTPUT PGBENCH_LOG_PREFIX APP_CPU_S PG_CPU_S PEAK_RSS_KB SECONDS [RATE [EXPECT]]

Columns: scenario round tool requests seconds unexpected socket_errors p50_us p99_us app_cpu_s
pg_cpu_s peak_rss_kb rate achieved_rate generator_bound stepped_down. `unexpected` = answers other than the expected status: any 2xx, or
exactly EXPECT when given (list_etag: 304); for pgbench, failed transactions. `socket_errors` =
connection/read/write errors and timeouts (loadgen: its error distribution, less the requests still in
flight at the deadline, which it aborts). `rate` = the fixed request rate of an open-loop (loadgen) run: the rate of its last attempt
(loadgen tries a lower rate after an attempt that fell behind its schedule by more than 5%);
`achieved_rate` = what that attempt sent per second; `generator_bound` = 1 when even the last
attempt fell behind (then p50_us and p99_us are empty: its latencies are the generator's queue, not
the service's); `stepped_down` = the generator-bound attempts before the last one.
"""
import glob, json, sys

kind, name, rnd, output, prefix, app_cpu, pg_cpu, rss, seconds = sys.argv[1:10]
rate = sys.argv[10] if len(sys.argv) > 10 else ""
expect = sys.argv[11] if len(sys.argv) > 11 else ""


def pct(sorted_values, p):
    if not sorted_values:
        return 0
    return sorted_values[min(len(sorted_values) - 1, int(round(p / 100 * (len(sorted_values) - 1))))]


def row(requests, secs, bad, sock, p50, p99, final_rate=None, achieved="", bound="", stepped=""):
    r = rate if final_rate is None else final_rate
    print(f"{name}\t{rnd}\t{kind}\t{requests}\t{secs:.3f}\t{bad}\t{sock}\t{p50}\t{p99}\t{app_cpu}\t{pg_cpu}\t{rss}\t{r}"
          f"\t{achieved}\t{bound}\t{stepped}")


def unexpected_statuses(codes):
    """codes: {status: count}; the count of those that are not the expected answer."""
    if expect:
        return sum(n for c, n in codes.items() if int(c) != int(expect))
    return sum(n for c, n in codes.items() if not 200 <= int(c) <= 299)


if kind == "wrk":
    line = next((l for l in open(output) if l.startswith("WRKJSON ")), None)
    if line is None:
        row(0, float(seconds), 0, 0, 0, 0)
        sys.exit(0)
    r = json.loads(line[len("WRKJSON "):])
    # `unexpected` is counted by common.lua's response(); wrk's own status errors (>= 400) are a
    # subset of it, kept as a floor in case a script is run without common.lua.
    row(r["requests"], r["duration_us"] / 1e6, max(r.get("unexpected", 0), r.get("status_errors", r.get("non2xx", 0))),
        r["socket_errors"], r["p50_us"], r["p99_us"])
elif kind == "loadgen":
    try:
        r = json.load(open(output))
    except (OSError, ValueError):
        row(0, float(seconds), 0, 0, 0, 0)
        sys.exit(0)
    codes = r.get("statusCodeDistribution", {})
    errors = {k: v for k, v in r.get("errorDistribution", {}).items() if "deadline" not in k}
    lat = r.get("latencyPercentiles")
    pace = r.get("rate") or {}
    bound = bool(pace.get("generatorBound")) or lat is None
    us = lambda k: "" if bound else int(round((lat.get(k) or 0) * 1e6))
    stepped = sum(1 for a in r.get("attempts", [])[:-1] if a.get("generatorBound"))
    final_rate = f"{pace['target']:.0f}" if "target" in pace else rate
    row(sum(codes.values()), r["summary"]["total"], unexpected_statuses(codes), sum(errors.values()), us("p50"), us("p99"),
        final_rate, f"{pace.get('achieved', 0):.0f}", int(bound), stepped)
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
    row(len(lat), secs, failed, 0, pct(lat, 50), pct(lat, 99))
