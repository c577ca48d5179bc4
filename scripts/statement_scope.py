#!/usr/bin/env python3
"""Reads the plans auto_explain logged (JSON format) while a test run used a cluster, and reports
every statement whose plan reads a tenant table without its company (issue 23, part 3).

  scripts/statement_scope.py DATABASE_URL POSTGRES_LOG [--fail] [--app NAME]
  scripts/statement_scope.py DATABASE_URL POSTGRES_LOG --statements [--allowed FILE] [--fail] [--app NAME]

The second form reads what `log_statement = all` logged instead of plans: every data statement
that names a tenant table must name `empresa_id` too (`make test` runs it over the whole suite,
scripts/test.sh; FILE lists the statements allowed without it, each with its reason).

DATABASE_URL is a migrated database of the same schema (the catalog tells which tables are
tenant tables and which column each index starts with). A scan of a tenant table is:

- by company: its index condition holds `empresa_id` on an index whose first column is
  `empresa_id` (one company's range: a router query once the table is distributed by company);
- bounded: an index condition on the index's first column, but not the company (e.g. the
  attempts of one delivery by `entrega_id`): cheap, but it would fan out to every shard;
- unbounded: a sequential scan, or an index read without a condition on its first column (a
  whole-index scan): its cost follows the table's size.

The cluster must run with `enable_seqscan = off`, so that a small test table is read through an
index whenever one applies, and a sequential scan in a plan means that none does. Prints each
statement (its first line and length) with what it scans; with --fail exits 1 when a statement
reads a tenant table unbounded. With --app, only the statements of sessions of that
`application_name` count (the log's line prefix must hold `%a: ` after `[%p] `): the service's
connections are named `consent-api`, a test's own SQL is not.
"""
import json
import re
import subprocess
import sys
from collections import defaultdict

SCANS = {"Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan"}
# Read across companies by design (docs/scaling.md, "Citus"): reference tables.
CROSS_COMPANY = {"empresas", "api_keys"}


def catalog(url):
    sql = """
    SELECT 'table', c.relname, '' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind = 'r'
       AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'empresa_id')
    UNION ALL
    SELECT 'index', i.relname, a.attname FROM pg_index x
      JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
      JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
     WHERE n.nspname = 'public'"""
    out = subprocess.run(["psql", url, "-tA", "-F", "\t", "-c", sql], check=True,
                         capture_output=True, text=True).stdout
    tenant, first_column = set(), {}
    for line in out.splitlines():
        kind, name, column = line.split("\t")
        if kind == "table":
            tenant.add(name)
        else:
            first_column[name] = column
    return tenant - CROSS_COMPANY, first_column


def entries(log_path):
    """Each entry of the server's log: its first line (the prefix's timestamp) and the lines that
    continue it."""
    entry = []
    with open(log_path, errors="replace") as log:
        for line in log:
            if re.match(r"^\d{4}-\d\d-\d\d ", line):
                if entry:
                    yield entry
                entry = [line]
            else:
                entry.append(line)
    if entry:
        yield entry


def plans(log_path, app=None):
    """Each (query text, plan) auto_explain logged (by sessions named `app`, when given)."""
    for entry in entries(log_path):
        yield from parse(entry, app)


def parse(entry, app):
    if not entry or "plan:" not in entry[0]:
        return
    if app is not None:
        named = re.match(r"^\S+ \S+ \S+ \[\d+\] ([^:]*): ", entry[0])
        if not named or named.group(1) != app:
            return
    text = entry[0].split("plan:", 1)[1] + "".join(entry[1:])
    try:
        doc = json.loads(text)
    except ValueError:
        return
    yield doc.get("Query Text", ""), doc.get("Plan", {})


def scans(node, tenant, first_column):
    """(relation, verdict, detail) of each scan of a tenant table in the plan."""
    kind = node.get("Node Type")
    relation = node.get("Relation Name")
    if kind in SCANS and relation in tenant:
        if kind == "Seq Scan":
            yield relation, "unbounded", "sequential scan"
        else:
            conds = []
            if kind == "Bitmap Heap Scan":
                conds = list(bitmap_conds(node))
            else:
                conds = [(node.get("Index Name"), node.get("Index Cond"))]
            for index, cond in conds:
                lead = first_column.get(index)
                if not cond or not lead or not re.search(rf"\b{lead}\b", cond):
                    yield relation, "unbounded", f"whole index {index}"
                elif lead == "empresa_id":
                    yield relation, "company", index
                else:
                    yield relation, "bounded", f"{index} by {lead}"
    for child in node.get("Plans", []):
        if kind == "Bitmap Heap Scan" and child.get("Node Type", "").startswith("Bitmap"):
            continue
        yield from scans(child, tenant, first_column)


def bitmap_conds(node):
    for child in node.get("Plans", []):
        if child.get("Node Type") == "Bitmap Index Scan":
            yield child.get("Index Name"), child.get("Index Cond")
        else:
            yield from bitmap_conds(child)


# Statements that change the schema or the session, not a company's rows.
NOT_DATA = re.compile(
    r"^\s*(CREATE|ALTER|DROP|COMMENT|DO|SET|RESET|SHOW|BEGIN|START|COMMIT|ROLLBACK|SAVEPOINT|"
    r"RELEASE|LOCK|VACUUM|ANALYZE|REINDEX|LISTEN|UNLISTEN|DISCARD|DEALLOCATE)\b", re.I)
TABLE_REF = re.compile(r'\b(?:FROM|JOIN|UPDATE|INTO|USING)\s+(?:ONLY\s+)?"?([a-z_][a-z0-9_]*)"?', re.I)


def statements(log_path, app=None):
    """Each statement text `log_statement = all` logged (by sessions named `app`, when given)."""
    for entry in entries(log_path):
        yield from statement_of(entry, app)


def statement_of(entry, app):
    if not entry:
        return
    logged = re.match(r"^\S+ \S+ \S+ \[\d+\] ([^:]*): LOG:  (?:statement|execute [^:]*): (.*)",
                      entry[0], re.S)
    if not logged or (app is not None and logged.group(1) != app):
        return
    yield logged.group(2) + "".join(entry[1:])


def main_statements(url, log_path, app, fail, allowed_path):
    """--statements: every data statement of `app` that names a tenant table must name
    `empresa_id` too (its filter, its join, its inserted column): a text check over the whole
    run, the plan check's complement (it sees every statement, however small the test's tables).
    Statements listed in `allowed_path` (a line each: a prefix of the statement's text, then
    `\t# why`) are reported apart."""
    tenant, _ = catalog(url)
    allowed = []
    if allowed_path:
        with open(allowed_path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    allowed.append(line.split("\t#")[0].strip())
    seen, by_company, allowed_seen = defaultdict(int), set(), set()
    for text in statements(log_path, app):
        # a migration's file is one simple query: its comments first, then its DDL
        text = re.sub(r"--[^\n]*", "", text)
        # a table named inside a string literal is no read of it (a test asking the catalog)
        text = re.sub(r"'(?:[^']|'')*'", "''", text)
        if NOT_DATA.match(text):
            continue
        flat = " ".join(text.split())
        tables = {t.lower() for t in TABLE_REF.findall(flat)} & tenant
        if not tables:
            continue
        if "empresa_id" in flat:
            by_company.add(flat[:240])
        elif any(flat.startswith(prefix) for prefix in allowed):
            allowed_seen.add(flat[:240])
        else:
            seen[(",".join(sorted(tables)), flat[:240])] += 1
    for (tables, flat), n in sorted(seen.items()):
        print(f"without its company\t{tables}\t{n} time(s)\t{flat}")
    for flat in sorted(allowed_seen):
        print(f"allowed\t{flat}")
    print(f"# statements on tenant tables with their company: {len(by_company)} kind(s); "
          f"without: {len(seen)} kind(s); allowed: {len(allowed_seen)}")
    if fail and seen:
        sys.exit(1)


def main():
    url, log_path = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    fail = "--fail" in rest
    app = rest[rest.index("--app") + 1] if "--app" in rest else None
    if "--statements" in rest:
        allowed = rest[rest.index("--allowed") + 1] if "--allowed" in rest else None
        main_statements(url, log_path, app, fail, allowed)
        return
    tenant, first_column = catalog(url)
    seen = defaultdict(set)
    for query, plan in plans(log_path, app):
        for relation, verdict, detail in scans(plan, tenant, first_column):
            seen[(verdict, relation, detail)].add(" ".join(query.split())[:240])
    unbounded = 0
    for (verdict, relation, detail), queries in sorted(seen.items()):
        if verdict == "company":
            continue
        unbounded += verdict == "unbounded"
        print(f"{verdict}\t{relation}\t{detail}\t{len(queries)} statement(s)")
        for q in sorted(queries):
            print(f"\t{q}")
    by_company = sum(len(q) for (v, _, _), q in seen.items() if v == "company")
    print(f"# scans by company: {by_company} statement(s); unbounded kinds: {unbounded}")
    if fail and unbounded:
        sys.exit(1)


if __name__ == "__main__":
    main()
