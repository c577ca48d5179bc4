"""Schemathesis extension of scripts/schemathesis.sh (loaded through SCHEMATHESIS_HOOKS).

`positive_data_acceptance_except_listed` is schemathesis' own `positive_data_acceptance` check
(schema-valid data must not be refused: by default anything but 2xx, 3xx, 401, 403, 404, 409,
429, 5xx fails) with one explicit exclusion: a 422 whose every field error is one of the rules
below, which a JSON Schema cannot state. Any other refusal of schema-valid data still fails the
run, and so does a 422 that names any other rule: whatever a schema can say, the OpenAPI
document must say (the patterns, lengths and enumerations of crates/delivery/http).

The list is the one of docs/decisions.md ("Contract fuzzing"); keep both in step.
"""
import re

import schemathesis
from schemathesis.openapi.checks import RejectedPositiveData
from schemathesis.specs.openapi.checks import positive_data_acceptance

# (field, message of the server, why no schema can state it). A batch item's field
# (`itens[3].cpfTitular`) counts as the field itself.
NOT_STATABLE_IN_A_SCHEMA = [
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
    ("atualizadoAte", "criadoAte deve ser igual ou posterior a criadoDe",
     "an order between two parameters' values"),
    ("url", re.compile(r"^a empresa já tem o máximo de \d+ URLs de webhook"),
     "state: the company's quota of URLs is full"),
    ("Idempotency-Key", re.compile(r"^esta chave já foi usada com outra requisição"),
     "state: the key was used before with another request"),
]


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


@schemathesis.check
def positive_data_acceptance_except_listed(ctx, response, case):
    try:
        return positive_data_acceptance(ctx, response, case)
    except RejectedPositiveData:
        if response.status_code == 422 and _only_listed_rules(response):
            return None
        raise
