#!/usr/bin/env python3
"""Inputs of one open-loop (oha) run of `make bench` (scripts/bench.sh): oha sends one fixed set of
headers per run, so it cannot pick a random company key per request as the wrk scripts do; what
varies per request is the body (`-Z FILE`: a random line of FILE each request) or the URL
(`--urls-from-file`: a random line each request).

  oha_inputs.py SCENARIO BENCH_DIR OUT_FILE REQUESTS [BASE_URL]

Writes OUT_FILE (bodies, or URLs for c15t_read) and prints the company key number (1-based line of
keys.txt) whose key the run must send, or 0 when the scenario needs none. Keyed scenarios use one
company: company 1 (list, creations), the company of the first active loaded request (hash).
Bodies that should be unique (pgcc_direct: referenciaExterna, c15t_record: subjectId) get 8x the
expected requests as lines, so few are sent twice (oha picks lines at random, with repetition).
"""
import random, sys, uuid

scenario, bench, out, requests = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
base = sys.argv[5] if len(sys.argv) > 5 else ""
rng = random.Random()


def lines(name):
    return [l.rstrip("\n") for l in open(f"{bench}/{name}") if l.strip()]


key = 0
rows = []
if scenario in ("create_ativo", "create_pendente"):
    key, cpfs = 1, lines("cpfs.txt")
    for _ in range(4096):
        body = (f'{{"casoDeUsoIdTemplate":"tpl-0000-{rng.randrange(100):03d}","cpfTitular":"{rng.choice(cpfs)}",'
                '"modalidadeAcesso":"Direto","tipoTitular":"PessoaFisica","dataExpiracaoConsentimento":"2030-12-31T23:59:59Z"')
        if scenario == "create_ativo":
            body += ',"dataTitularRespondeuConsentimento":"2026-01-10T12:00:00Z","provaColeta":"assinatura:bench"'
        rows.append(body + "}")
elif scenario == "hash":
    inputs = [l.split("\t") for l in lines("hash_inputs.txt")]
    key = int(inputs[0][0])
    rows = [f'{{"cpfTitular":"{c}","casoDeUsoIdTemplate":"{t}"}}' for n, c, t in inputs if int(n) == key]
elif scenario == "pgcc_direct":
    cnpjs, cpfs = lines("cnpjs.txt"), lines("cpfs.txt")
    for _ in range(max(1000, 8 * requests)):
        n = rng.randrange(len(cnpjs)) + 1
        rows.append(
            f'{{"referenciaExterna":"{uuid.UUID(int=rng.getrandbits(128), version=4)}","cnpjEmpresa":"{cnpjs[n - 1]}",'
            f'"vinculoId":"00000000-0000-4000-9000-{n:012d}","templateId":"tpl-{n - 1:04d}-{rng.randrange(50) * 2:03d}",'
            f'"cpfTitular":"{rng.choice(cpfs)}","tipoTitular":"PessoaFisica","modalidadeAcesso":"Direto",'
            '"cnpjAnuente":null,"dataExpiracaoConsentimento":"2030-12-31T23:59:59Z","status":"ativo",'
            '"dataTitularRespondeuConsentimento":"2026-01-10T12:00:00Z","provaColeta":"assinatura:bench"}')
elif scenario == "c15t_record":
    b58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    for _ in range(max(1000, 8 * requests)):
        sid = "sub_" + "".join(rng.choice(b58) for _ in range(16))
        rows.append(f'{{"subjectId":"{sid}","domain":"bench.example","type":"cookie_banner","givenAt":1763726400000,'
                    '"preferences":{"necessary":true,"measurement":true,"marketing":false}}')
elif scenario == "c15t_read":
    rows = [f"{base}/subjects/{i}" for i in lines("c15t_subjects.txt")]
elif scenario in ("list", "list_etag"):
    key = 1
else:  # health: no key, no body
    pass
with open(out, "w") as f:
    f.write("\n".join(rows) + ("\n" if rows else ""))
print(key)
