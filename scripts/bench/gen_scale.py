#!/usr/bin/env python3
"""Consent requests of `make bench-scale` (scripts/bench-scale.sh), streamed as CSV to stdout for
COPY (psql's \\copy ... FROM PROGRAM): nothing is written to disk but small samples.

  gen_scale.py COMPANIES USE_CASES_PER_COMPANY START COUNT BASE_TS

Rows START .. START+COUNT-1 (deterministic: the generator is seeded by START): row i belongs to
company i % COMPANIES + 1 (ids, keys and templates as gen_data.py makes them), a random one of its
use cases, a random valid CPF of a pool of 20,000, statuses mixed as in `make bench` (60% ativo),
`criado_em` = BASE_TS + i ms (distinct and increasing, so a batch is found by its time range and
the list's order by creation time is realistic).
The history is derived in SQL from `criado_em`, and the inputs of the read scenarios sampled
from the loaded table (see bench-scale.sh).
"""
import csv, datetime, hashlib, os, random, sys, uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpf import cpf as make_cpf  # noqa: E402

companies, per_company, start, count = (int(a) for a in sys.argv[1:5])
base_ts = datetime.datetime.fromisoformat(sys.argv[5].replace("Z", "+00:00"))


pool_rng = random.Random(20261127)
cpfs = [make_cpf(pool_rng) for _ in range(20_000)]
statuses = ["ativo"] * 6 + ["pendente"] * 2 + ["recusado", "expirado"]


w = csv.writer(sys.stdout)
rng = random.Random(start)
second_text, second_of = "", None
for i in range(start, start + count):
    n = i % companies + 1
    j = rng.randrange(per_company)
    status = statuses[rng.randrange(len(statuses))]
    c = cpfs[rng.randrange(len(cpfs))]
    rid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    answered = status in ("ativo", "recusado", "expirado")
    expiry = "2020-06-30T00:00:00Z" if status == "expirado" else "2030-12-31T23:59:59Z"
    # BASE_TS + i ms; the date text is formatted once per second (formatting is the slow part)
    if i // 1000 != second_of:
        second_of = i // 1000
        second_text = (base_ts + datetime.timedelta(seconds=second_of)).strftime("%Y-%m-%d %H:%M:%S")
    created = f"{second_text}.{i % 1000:03d}+00"
    company = f"00000000-0000-4000-8000-{n:012d}"
    tpl = f"tpl-{n - 1:04d}-{j:03d}"
    w.writerow([rid, company, f"00000000-0000-4000-a{j:03d}-{n:012d}", tpl, c, "PessoaFisica", "Direto", "",
                expiry, "2026-01-10T12:00:00Z" if answered else "", "assinatura:bench" if answered else "",
                status, f"sim-{rid}", created, created, hashlib.sha256(rid.encode()).hexdigest(),
                "2099-01-01T00:00:00Z", "confirmada", ""])
