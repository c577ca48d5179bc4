#!/usr/bin/env python3
"""Which of the service's statements Citus planned on one shard (router) and which on several.

Reads a Citus coordinator's server log written with `log_statement = all`, `log_line_prefix =
'%m [%p] %a: '`, `citus.multi_task_query_log_level = 'log'` and `log_min_error_statement = 'log'`
(scripts/test-citus.sh sets them): every statement of the sessions named `--app` is one line, and
when Citus plans a statement as several tasks (several shards) it logs "multi-task query about
to be executed" followed by the `STATEMENT:` it was planning, which names the statement whatever
the moment of planning (at the Bind, or for a subplan during the execution). A statement is
multi-shard when any of its executions was planned so (a cached plan is not planned again).
Statements naming no table (BEGIN, SET, ...) are left out, and so are Citus's own statements (on
one shard, or for a part it plans apart, with the parameters' values written in).

  citus_plans.py LOG [--app NAME] [--tsv FILE]
"""

import argparse
import re
import sys
from collections import defaultdict

ENTRY = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ \[(\d+)\] (.*?): ([A-Z]+):\s+(.*)$"
)
STATEMENT = re.compile(r"^(?:statement|execute [^:]*):\s+(.*)$", re.S)
MULTI = "multi-task query about to be executed"
TABLE = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|USING)\s+\"?[a-z_]+\"?", re.I)
# Citus's own statements on one shard (`public.api_keys_102009`), run by the coordinator on its
# own placements within the service's session: not the service's, and they carry values.
SHARD = re.compile(r"\b[a-z_]+_\d{6,}\b")
# Citus's own statements for the parts it plans apart (a subplan's intermediate result, an
# INSERT ... SELECT evaluated on the coordinator), run in the service's session with the
# parameters' values written in: not the service's statements, and they carry values.
CITUS_OWN = re.compile(r"intermediate_result|'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'::uuid")


def entries(path):
    """(pid, app, level, message) of each log entry, its continuation lines joined."""
    current = None
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            line = line.rstrip("\n")
            m = ENTRY.match(line)
            if m:
                if current:
                    yield current
                current = [m.group(1), m.group(2), m.group(3), m.group(4)]
            elif current is not None:
                current[3] += "\n" + line
    if current:
        yield current


def normalize(text):
    return " ".join(text.split())


def classify(path, app):
    """{statement: [executions, multi-shard plannings]} for the sessions of `app`."""
    stats = defaultdict(lambda: [0, 0])
    multi = set()  # pids whose next STATEMENT line is a multi-shard planning
    for pid, name, level, message in entries(path):
        if name != app:
            continue
        if level == "LOG" and message.startswith(MULTI):
            multi.add(pid)
        elif level == "STATEMENT" and pid in multi:
            multi.discard(pid)
            stats[normalize(message)][1] += 1
        elif level == "LOG":
            m = STATEMENT.match(message)
            if m:
                stats[normalize(m.group(1))][0] += 1
    return {
        s: v
        for s, v in stats.items()
        if TABLE.search(s) and not SHARD.search(s) and not CITUS_OWN.search(s)
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("--app", default="consent-api")
    parser.add_argument("--tsv")
    args = parser.parse_args()
    stats = classify(args.log, args.app)
    if not stats:
        print(f"no statement of `{args.app}` in {args.log}", file=sys.stderr)
        return 1
    rows = sorted(
        ((("multi-shard" if multi else "router"), runs, text) for text, (runs, multi) in stats.items()),
        key=lambda r: (r[0] != "multi-shard", -r[1], r[2]),
    )
    if args.tsv:
        with open(args.tsv, "w", encoding="utf-8") as out:
            out.write("plan\texecutions\tstatement\n")
            for kind, runs, text in rows:
                out.write(f"{kind}\t{runs}\t{text}\n")
    router = [r for r in rows if r[0] == "router"]
    multi = [r for r in rows if r[0] == "multi-shard"]
    runs = sum(r[1] for r in rows)
    router_runs = sum(r[1] for r in router)
    print(
        f"{len(rows)} distinct statements of `{args.app}`: {len(router)} router "
        f"({100 * len(router) / len(rows):.0f}%), {len(multi)} multi-shard; "
        f"{runs} executions, {100 * router_runs / max(runs, 1):.1f}% router"
    )
    for kind, n, text in multi:
        print(f"  multi-shard  {n:>7}  {text[:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
