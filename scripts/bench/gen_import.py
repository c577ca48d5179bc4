#!/usr/bin/env python3
"""The file of `make bench-import` (scripts/bench-import.sh): a bulk import in JSON Lines.

  gen_import.py OUT_FILE INVALID_LINES_FILE LINES TEMPLATES PREFIX [INVALID_PER_MILLE]

Deterministic (fixed seed). LINES consent lines for the templates in TEMPLATES (comma-separated),
`idExterno` = PREFIX-<n>, active (an answer date in the past and a proof) or pending, one line in
100 (INVALID_PER_MILLE = 10) broken in one of the ways docs/imports.md lists: a CPF with a wrong
check digit, an unknown template, an answer date in the future, an `idExterno` repeated from an
earlier line. The line numbers of the broken lines go to INVALID_LINES_FILE, one a line, so the
run can check that the import's errors name exactly those.
"""
import json
import random
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpf import cpf as valid_cpf  # noqa: E402

out, invalid_out, lines, templates, prefix = sys.argv[1:6]
lines = int(lines)
per_mille = int(sys.argv[6]) if len(sys.argv) > 6 else 10
templates = templates.split(",")
rng = random.Random(20261207)


def cpf():
    return valid_cpf(rng)


# A pool of valid CPFs (subjects hold several consents), so generating 10^6 lines stays a matter
# of seconds.
pool = [cpf() for _ in range(50_000)]
breakages = ("cpf", "template", "future", "duplicate")
invalid = []
with open(out, "w") as f:
    for n in range(1, lines + 1):
        line = {
            "casoDeUsoIdTemplate": templates[n % len(templates)],
            "cpfTitular": pool[rng.randrange(len(pool))],
            "modalidadeAcesso": "Direto",
            "tipoTitular": "PessoaFisica",
            "dataExpiracaoConsentimento": "2030-12-31T23:59:59Z",
            "idExterno": f"{prefix}-{n}",
            "origem": "legado-crm" if n % 2 else "agencias",
        }
        if n % 4:
            line["dataTitularRespondeuConsentimento"] = "2025-03-10T12:00:00Z"
            line["provaColeta"] = f"assinatura-digital:{prefix}-{n}"
        if n > 1 and rng.randrange(1000) < per_mille:
            kind = breakages[len(invalid) % len(breakages)]
            if kind == "duplicate" and invalid and invalid[-1] == n - 1:
                kind = "cpf"  # the line it would repeat was never staged
            if kind == "cpf":
                c = line["cpfTitular"]
                line["cpfTitular"] = c[:10] + str((int(c[10]) + 1) % 10)
            elif kind == "template":
                line["casoDeUsoIdTemplate"] = "tpl-nao-existe"
            elif kind == "future":
                line["dataTitularRespondeuConsentimento"] = "2099-01-01T00:00:00Z"
                line["provaColeta"] = "assinatura:futura"
            else:
                line["idExterno"] = f"{prefix}-{n - 1}"
            invalid.append(n)
        f.write(json.dumps(line, separators=(",", ":")) + "\n")
with open(invalid_out, "w") as f:
    f.write("".join(f"{n}\n" for n in invalid))
print(f"{lines} lines, {len(invalid)} broken, in {out}")
