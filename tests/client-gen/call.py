"""Imports the client generated from /openapi.json and makes one call through it.

    python call.py BASE_URL API_KEY    (with the generated package `consent_api_client` importable)

Prints one JSON line, {"sucesso": ..., "templates": [...]}, for the Rust test to assert on.
"""
import json
import sys

from consent_api_client import Client
from consent_api_client.api.casos_de_uso import listar_casos_de_uso as list_use_cases
from consent_api_client.models.envelope_vec_caso_de_uso import EnvelopeVecCasoDeUso

base_url, api_key = sys.argv[1], sys.argv[2]
with Client(base_url=base_url, raise_on_unexpected_status=True) as client:
    response = list_use_cases.sync_detailed(client=client, api_key=api_key)
envelope = response.parsed
if response.status_code != 200 or not isinstance(envelope, EnvelopeVecCasoDeUso):
    sys.exit(f"GET /api/casos-de-uso answered {response.status_code}: {response.content!r}")
print(json.dumps({
    "sucesso": envelope.sucesso,
    "pgccCodigoErro": str(envelope.pgcc_codigo_erro.value),
    "templates": sorted(c.pgcc_provider_template_id for c in envelope.data),
    "titulos": sorted(c.titulo for c in envelope.data),
}, ensure_ascii=False))
