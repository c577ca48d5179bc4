"""Schemathesis extension of scripts/schemathesis.sh (loaded through SCHEMATHESIS_HOOKS).

`positive_data_acceptance_except_listed` is schemathesis' own `positive_data_acceptance` check
(schema-valid data must not be refused: by default anything but 2xx, 3xx, 401, 403, 404, 409,
429, 5xx fails) with one explicit exclusion: a 422 whose every field error is one of the rules
below, which a JSON Schema cannot state. Any other refusal of schema-valid data still fails the
run, and so does a 422 that names any other rule: whatever a schema can say, the OpenAPI
document must say (the patterns, lengths and enumerations of crates/delivery/http).

The list is the one of docs/decisions.md ("Contract fuzzing"); keep both in step.

`flatmap_body` gives those rules their chance too: next to every generated body, the same body
with its schema-valid CPF and CNPJ given the right check digits, a template the company has
synchronized (ST_TEMPLATES) and its instants moved where the server wants them (expiry in the
future, answer in the past). Only fields that are already schema-valid are changed, so a body
generated to break the schema still breaks it; and creations now succeed often enough that the
stateful phase follows the document's links to the read and the revocation.
"""
import datetime
import os
import re

import schemathesis
from hypothesis import strategies as st
from schemathesis.openapi.checks import RejectedPositiveData
from schemathesis.specs.openapi.checks import (
    negative_data_rejection,
    positive_data_acceptance,
    use_after_free,
)

# (field, message of the server, why no schema can state it). A batch item's field
# (`itens[3].cpfTitular`) counts as the field itself.
NOT_STATABLE_IN_A_SCHEMA = [
    ("sha256", "Os bytes enviados não têm o SHA-256 do caminho; nada foi guardado.",
     "PUT .../arquivos/{sha256} (docs/evidencias.md): the path's hash is the body's SHA-256, "
     "a rule between the path and the bytes"),
    ("cpfTitular", "os dígitos verificadores do CPF não conferem", "check digits"),
    ("cpfTitular", "o CPF não pode ter todos os dígitos iguais",
     "check digits: the ten repeated-digit numbers pass the arithmetic but are not issued"),
    ("cnpjAnuente", "os dígitos verificadores do CNPJ não conferem", "check digits"),
    ("cnpjAnuente", "o CNPJ não pode ter todos os caracteres iguais",
     "check digits: repeated characters pass the arithmetic but are not issued"),
    ("casoDeUsoIdTemplate", "nenhum caso de uso sincronizado da empresa tem este template",
     "the company's synchronized templates (data, not shape)"),
    ("dataExpiracaoConsentimento", "a data de expiração deve ser posterior ao momento atual",
     "an instant relative to now"),
    ("dataTitularRespondeuConsentimento", "a data da resposta do titular não pode estar no futuro",
     "an instant relative to now"),
    ("dataTitularRespondeuConsentimento",
     "a data da resposta do titular deve ser anterior à data de expiração",
     "an order between two fields' values"),
    ("criadoAte", "criadoAte deve ser igual ou posterior a criadoDe",
     "an order between two parameters' values"),
    ("atualizadoAte", "atualizadoAte deve ser igual ou posterior a atualizadoDe",
     "an order between two parameters' values"),
    ("ate", "O último dia deve ser igual ou posterior ao primeiro.",
     "an order between two parameters' values (GET /api/exportacoes)"),
    ("url", re.compile(r"^a empresa já tem o máximo de \d+ URLs de webhook"),
     "state: the company's quota of URLs is full"),
    ("Idempotency-Key", re.compile(r"^esta chave já foi usada com outra requisição"),
     "state: the key was used before with another request"),
] + [
    # GET .../registro (docs/records.md): a record needs the company's controller profile (set by
    # the operator's CLI) and its use case's annotations; a request for one before they are set
    # is well formed, and answered 422 naming what is missing
    (field, re.compile(r".*"), "state: the controller profile or the use case's annotations")
    for field in ("controlador.nome", "controlador.endereco", "controlador.contatoDpo",
                  "casoDeUso", "casoDeUso.versao", "casoDeUso.baseLegal",
                  "casoDeUso.categoriasDados", "casoDeUso.urlAviso", "casoDeUso.idiomaAviso")
]

# Operations whose schema does not yet state every rule of their body, so schema-valid data may
# still be refused (422): positive-data acceptance is not checked there until it does; every
# other check still runs. PUT .../anotacoes (issue 37, part 6): its fields are documented
# optional so that one answer names every missing one, and the hypothesis' article, the
# categories' uniqueness and the notice URL's and language's shapes are not in its schema yet.
# POST /api/importacoes (issue 37, part 1; docs/imports.md): its body is a file, documented as
# one line's object (JSON Lines) or a string (CSV); what makes a file acceptable (a CSV header of
# known columns, every line a creation's body) is not a JSON Schema of that string.
POSITIVE_DATA_NOT_YET_STATED = {
    ("PUT", "/api/casos-de-uso/{id}/anotacoes"),
    ("POST", "/api/importacoes"),
}


# A file whose lines break the line's schema is still a file the service takes (202): each bad
# line is an error of that line, named by `GET /api/importacoes/{id}/erros` (docs/imports.md),
# and nothing is created for it. The line's schema describes a line, not the upload.
FILE_OF_LINES = {("POST", "/api/importacoes")}


@schemathesis.check
def negative_data_rejection_except_files(ctx, response, case):
    if (case.operation.method.upper(), case.operation.path) in FILE_OF_LINES:
        return None
    return negative_data_rejection(ctx, response, case)


@schemathesis.serializer("application/x-ndjson")
def json_lines(_ctx, value):
    """A JSON Lines file (POST /api/importacoes) of the generated line, or of each item of a
    generated list: schemathesis has no serializer of its own for this media type."""
    import json

    items = value if isinstance(value, list) else [value]
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items).encode()


@schemathesis.serializer("application/pdf", "audio/mpeg", "audio/ogg", "audio/wav", "video/mp4")
def file_bytes(_ctx, value):
    """An evidence file's body (PUT .../arquivos, docs/evidencias.md): the generated bytes as
    they are; schemathesis has no serializer of its own for these media types."""
    import json

    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    return json.dumps(value).encode()


def _listed(campo: str, mensagem: str) -> bool:
    campo = re.sub(r"^itens\[\d+\]\.", "", campo)
    for field, message, _why in NOT_STATABLE_IN_A_SCHEMA:
        if field != campo:
            continue
        if message == mensagem if isinstance(message, str) else message.search(mensagem):
            return True
    return False


def _only_listed_rules(response) -> bool:
    try:
        body = response.json()
    except Exception:
        return False
    erros = (body.get("data") or {}).get("erros") if isinstance(body, dict) else None
    return bool(erros) and all(_listed(e.get("campo", ""), e.get("mensagem", "")) for e in erros)


# A removed webhook URL's delivery log stays readable, on purpose (docs/webhooks.md, "Removal":
# its cancelled deliveries are the record of what it missed), so a 200 there after the URL's
# DELETE is not a use after free. Every other read under a deleted resource is still checked.
READABLE_AFTER_DELETE = {("GET", "/api/webhook-urls/{webhookUrlId}/entregas")}


@schemathesis.check
def use_after_free_except_delivery_log(ctx, response, case):
    if (case.operation.method.upper(), case.operation.path) in READABLE_AFTER_DELETE:
        return None
    return use_after_free(ctx, response, case)


@schemathesis.check
def positive_data_acceptance_except_listed(ctx, response, case):
    if (case.operation.method.upper(), case.operation.path) in POSITIVE_DATA_NOT_YET_STATED:
        return None
    try:
        return positive_data_acceptance(ctx, response, case)
    except RejectedPositiveData:
        if response.status_code == 422 and _only_listed_rules(response):
            return None
        raise


TEMPLATES = [t for t in os.environ.get("ST_TEMPLATES", "").split(",") if t]
CPF_SHAPE = re.compile(r"^[0-9]{3}\.?[0-9]{3}\.?[0-9]{3}-?[0-9]{2}$")
CNPJ_SHAPE = re.compile(r"^[0-9A-Za-z]{2}\.?[0-9A-Za-z]{3}\.?[0-9A-Za-z]{3}/?[0-9A-Za-z]{4}-?[0-9]{2}$")
INSTANT = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$")
NON_BLANK = re.compile(r"^[^\u0000]*[^\u0000\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^\u0000]*$")


def _with_cpf_check_digits(cpf: str) -> str:
    digits = [int(c) for c in cpf if c.isdigit()][:9]
    if len(set(digits)) == 1:
        digits[0] = (digits[0] + 1) % 10
    for n in (9, 10):
        total = sum(d * w for d, w in zip(digits, range(n + 1, 1, -1)))
        digits.append(total * 10 % 11 % 10)
    out, it = [], iter(digits)
    for c in cpf:
        out.append(str(next(it)) if c.isdigit() else c)
    return "".join(out)


def _with_cnpj_check_digits(cnpj: str) -> str:
    chars = [c.upper() for c in cnpj if c.isalnum()][:12]
    if len(set(chars)) == 1:
        chars[0] = "1" if chars[0] != "1" else "2"
    for n in (12, 13):
        total = sum((ord(c) - 48) * w for c, w in zip(reversed(chars[:n]), [2, 3, 4, 5, 6, 7, 8, 9] * 2))
        r = total % 11
        chars.append("0" if r < 2 else str(11 - r))
    out, it = [], iter(chars)
    for c in cnpj:
        out.append(next(it) if c.isalnum() else c)
    return "".join(out)


def _instant(value) -> bool:
    if not isinstance(value, str) or not INSTANT.match(value):
        return False
    try:
        datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        return True
    except ValueError:
        return False


def _repaired(body):
    if not isinstance(body, dict):
        return body
    body = dict(body)
    cpf = body.get("cpfTitular")
    if isinstance(cpf, str) and CPF_SHAPE.match(cpf):
        body["cpfTitular"] = _with_cpf_check_digits(cpf)
    cnpj = body.get("cnpjAnuente")
    if isinstance(cnpj, str) and CNPJ_SHAPE.match(cnpj):
        body["cnpjAnuente"] = _with_cnpj_check_digits(cnpj)
    template = body.get("casoDeUsoIdTemplate")
    if TEMPLATES and isinstance(template, str) and NON_BLANK.search(template) and len(template) <= 200:
        body["casoDeUsoIdTemplate"] = TEMPLATES[len(template) % len(TEMPLATES)]
    if _instant(body.get("dataExpiracaoConsentimento")):
        body["dataExpiracaoConsentimento"] = "2099-12-31T23:59:59Z"
    if _instant(body.get("dataTitularRespondeuConsentimento")):
        body["dataTitularRespondeuConsentimento"] = "2026-01-10T12:00:00Z"
    if isinstance(body.get("itens"), list):
        body["itens"] = [_repaired(item) for item in body["itens"]]
    return body


@schemathesis.hook
def flatmap_body(context, body):
    repaired = _repaired(body)
    return st.just(body) if repaired == body else st.sampled_from([body, repaired])
