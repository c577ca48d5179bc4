#!/usr/bin/env python3
"""Data set of `make bench` (scripts/bench.sh): CSV files to COPY into the migrated schema, the
PGCC simulator's seed, and the inputs of the load scripts.

  gen_data.py OUTDIR [COMPANIES] [USE_CASES_PER_COMPANY] [REQUESTS]

Deterministic (fixed seed), so every run loads the same rows:
- company n (1-based): id 00000000-0000-4000-8000-<n, 12 digits>, a valid numeric CNPJ;
- its API key: `cak_` + sha256("bench-key-<n>") in hex + `_` + the 8-hex checksum (first 4 bytes of
  the SHA-256 of what precedes it), stored as the lower-case hex SHA-256 of the whole key, as
  crates/application/src/access/api_keys.rs does; pgbench rebuilds the same key from n in SQL;
- its use cases: template `tpl-<n-1, 4 digits>-<j, 3 digits>`, two links (vínculos);
- consent requests spread evenly over the companies, statuses mixed (60% ativo), valid CPFs.

Storage order: casos_de_uso.csv is written company by company, so COPY puts each company's use
cases side by side in the heap (a best case for the per-company list). With BENCH_SHUFFLE=1 in the
environment its rows are written in a shuffled order across companies (fixed seed), as interleaved
synchronizations of many companies would leave them in production; every other file, and the
content of casos_de_uso.csv, stay the same.
"""
import csv, hashlib, json, os, random, sys, uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpf import cpf as valid_cpf  # noqa: E402

out = sys.argv[1]
companies = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
per_company = int(sys.argv[3]) if len(sys.argv) > 3 else 100
requests = int(sys.argv[4]) if len(sys.argv) > 4 else 100_000
rng = random.Random(20261121)
os.makedirs(out, exist_ok=True)


def cnpj(n):
    base = [int(c) for c in f"{10_000_000 + n:08d}0001"]
    for weights in ([5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2], [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]):
        r = sum(d * w for d, w in zip(base, weights)) % 11
        base.append(0 if r < 2 else 11 - r)
    return "".join(map(str, base))


def cpf():
    return valid_cpf(rng)


def company_id(n):
    return f"00000000-0000-4000-8000-{n:012d}"


def key_of(n):
    body = "cak_" + hashlib.sha256(f"bench-key-{n}".encode()).hexdigest()
    return body + "_" + hashlib.sha256(body.encode()).hexdigest()[:8]


def vinculo(n, v):
    return f"00000000-0000-4000-9{v:03d}-{n:012d}"


def use_case_id(n, j):
    return f"00000000-0000-4000-a{j:03d}-{n:012d}"


def template(n, j):
    return f"tpl-{n - 1:04d}-{j:03d}"


now = "2026-11-21T12:00:00Z"
shuffle = os.environ.get("BENCH_SHUFFLE", "0") not in ("", "0")
use_cases = []
seed = {"empresas": []}
with open(f"{out}/empresas.csv", "w", newline="") as fe, \
        open(f"{out}/api_keys.csv", "w", newline="") as fk, \
        open(f"{out}/casos_de_uso.csv", "w", newline="") as fc, \
        open(f"{out}/keys.txt", "w") as keys, open(f"{out}/cnpjs.txt", "w") as cnpjs:
    we, wk, wc = csv.writer(fe), csv.writer(fk), csv.writer(fc)
    for n in range(1, companies + 1):
        we.writerow([company_id(n), f"Empresa Bench {n}", cnpj(n), now])
        key = key_of(n)
        keys.write(key + "\n")
        cnpjs.write(cnpj(n) + "\n")
        wk.writerow([str(uuid.UUID(int=rng.getrandbits(128), version=4)), company_id(n),
                     hashlib.sha256(key.encode()).hexdigest(), key[:12], now])
        vinculos = {0: [], 1: []}
        for j in range(per_company):
            v = j % 2
            titulo = f"Caso de uso {j:03d} da empresa {n}"
            use_cases.append([use_case_id(n, j), company_id(n), vinculo(n, v), titulo, template(n, j), now, now])
            vinculos[v].append({"templateId": template(n, j), "titulo": titulo})
        seed["empresas"].append({"cnpj": cnpj(n), "vinculos": [
            {"id": vinculo(n, v), "casosDeUso": vinculos[v]} for v in (0, 1)]})
    if shuffle:  # its own generator: the other files stay byte for byte the same
        random.Random(20261122).shuffle(use_cases)
    wc.writerows(use_cases)
with open(f"{out}/seed.json", "w") as f:
    json.dump(seed, f)

cpfs = [cpf() for _ in range(20_000)]
with open(f"{out}/cpfs.txt", "w") as f:
    f.write("\n".join(cpfs[:2000]) + "\n")

statuses = ["ativo"] * 6 + ["pendente"] * 2 + ["recusado", "expirado"]
valid = []  # (company n, cpf, template) of active requests: the HashConsulta inputs
with open(f"{out}/solicitacoes.csv", "w", newline="") as fs:
    ws = csv.writer(fs)
    for i in range(requests):
        n = i % companies + 1
        j = rng.randrange(per_company)
        status = statuses[rng.randrange(len(statuses))]
        c = cpfs[rng.randrange(len(cpfs))]
        rid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        answered = status in ("ativo", "recusado", "expirado")
        expiry = "2020-06-30T00:00:00Z" if status == "expirado" else "2030-12-31T23:59:59Z"
        ws.writerow([rid, company_id(n), use_case_id(n, j), template(n, j), c, "PessoaFisica", "Direto", "",
                     expiry, "2026-01-10T12:00:00Z" if answered else "", "assinatura:bench" if answered else "",
                     status, f"sim-{rid}", now, now, hashlib.sha256(rid.encode()).hexdigest(),
                     "2099-01-01T00:00:00Z", "confirmada", ""])
        if status == "ativo" and len(valid) < 20_000:
            valid.append((n, c, template(n, j)))
with open(f"{out}/hash_inputs.txt", "w") as f:
    for n, c, t in valid:
        f.write(f"{n}\t{c}\t{t}\n")
print(f"generated {companies} companies x {per_company} use cases ({'shuffled' if shuffle else 'company by company'}), "
      f"{requests} consent requests in {out}")
