#!/usr/bin/env python3
"""Inputs of one open-loop (loadgen) run of `make bench` (scripts/bench.sh): the same kind of
requests as the scenario's wrk script, a random line of each file per request.

  loadgen_inputs.py SCENARIO BENCH_DIR OUT_PREFIX REQUESTS [BASE_URL]

Writes the files the scenario needs and prints loadgen's arguments for them, one per line:
OUT_PREFIX.keys (--keys: one company key a line; list and list_etag: all 1,000 keys),
OUT_PREFIX.etags (--etags: the ETag of the key on the same line), OUT_PREFIX.bodies (--bodies;
when it has as many lines as OUT_PREFIX.keys, line i is sent with key i: a creation names one of
its company's templates, a HashConsulta one of its company's requests), OUT_PREFIX.urls
(--urls-file; likewise paired with the keys when as many: get names its company's request). Bodies that should be unique (pgcc_direct: referenciaExterna, c15t_record:
subjectId) get 8x the expected requests as lines, so few are sent twice.
"""
import os, random, sys, uuid

scenario, bench, prefix, requests = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
base = sys.argv[5] if len(sys.argv) > 5 else ""
rng = random.Random()
use_cases = int(os.environ.get("BENCH_USE_CASES", "100"))  # per company (bench-scale: fewer)


def lines(name):
    return [l.rstrip("\n") for l in open(f"{bench}/{name}") if l.strip()]


def write(kind, rows):
    with open(f"{prefix}.{kind}", "w") as f:
        f.write("\n".join(rows) + "\n")
    flag = {"urls": "--urls-file"}.get(kind, f"--{kind}")
    print(flag)
    print(f"{prefix}.{kind}")


keys = lines("keys.txt")
if scenario in ("create_ativo", "create_pendente"):
    cpfs, paired_keys, bodies = lines("cpfs.txt"), [], []
    for _ in range(8192):
        n = rng.randrange(len(keys)) + 1
        body = (f'{{"casoDeUsoIdTemplate":"tpl-{n - 1:04d}-{rng.randrange(use_cases):03d}","cpfTitular":"{rng.choice(cpfs)}",'
                '"modalidadeAcesso":"Direto","tipoTitular":"PessoaFisica","dataExpiracaoConsentimento":"2030-12-31T23:59:59Z"')
        if scenario == "create_ativo":
            body += ',"dataTitularRespondeuConsentimento":"2026-01-10T12:00:00Z","provaColeta":"assinatura:bench"'
        paired_keys.append(keys[n - 1])
        bodies.append(body + "}")
    write("keys", paired_keys)
    write("bodies", bodies)
elif scenario == "hash":
    inputs = [l.split("\t") for l in lines("hash_inputs.txt")]
    write("keys", [keys[int(n) - 1] for n, _, _ in inputs])
    write("bodies", [f'{{"cpfTitular":"{c}","casoDeUsoIdTemplate":"{t}"}}' for _, c, t in inputs])
elif scenario == "pgcc_direct":
    cnpjs, cpfs, rows = lines("cnpjs.txt"), lines("cpfs.txt"), []
    for _ in range(max(1000, 8 * requests)):
        n = rng.randrange(len(cnpjs)) + 1
        rows.append(
            f'{{"referenciaExterna":"{uuid.UUID(int=rng.getrandbits(128), version=4)}","cnpjEmpresa":"{cnpjs[n - 1]}",'
            f'"vinculoId":"00000000-0000-4000-9000-{n:012d}","templateId":"tpl-{n - 1:04d}-{rng.randrange(50) * 2:03d}",'
            f'"cpfTitular":"{rng.choice(cpfs)}","tipoTitular":"PessoaFisica","modalidadeAcesso":"Direto",'
            '"cnpjAnuente":null,"dataExpiracaoConsentimento":"2030-12-31T23:59:59Z","status":"ativo",'
            '"dataTitularRespondeuConsentimento":"2026-01-10T12:00:00Z","provaColeta":"assinatura:bench"}')
    write("bodies", rows)
elif scenario == "c15t_record":
    b58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    rows = []
    for _ in range(max(1000, 8 * requests)):
        sid = "sub_" + "".join(rng.choice(b58) for _ in range(16))
        rows.append(f'{{"subjectId":"{sid}","domain":"bench.example","type":"cookie_banner","givenAt":1763726400000,'
                    '"preferences":{"necessary":true,"measurement":true,"marketing":false}}')
    write("bodies", rows)
elif scenario == "c15t_read":
    write("urls", [f"{base}/subjects/{i}" for i in lines("c15t_subjects.txt")])
elif scenario == "list":
    write("keys", keys)
elif scenario == "list_status":
    write("keys", keys)
    write("urls", [f"{base}/api/solicitacao-consentimento?status=ativo"])
elif scenario == "get":
    inputs = [l.split("\t") for l in lines("requests.txt")]
    write("keys", [keys[int(n) - 1] for n, _ in inputs])
    write("urls", [f"{base}/api/solicitacao-consentimento/{i}" for _, i in inputs])
elif scenario == "list_etag":
    write("keys", keys)
    write("etags", lines("etags.txt"))
# health: no key, no body
