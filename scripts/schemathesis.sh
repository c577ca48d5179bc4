#!/usr/bin/env bash
# `make fuzz-contract` (and CI, after `make test`): contract fuzzing with schemathesis against the
# OpenAPI document served by a live `consent-api`, started here with its own PostgreSQL cluster
# and a seeded PGCC simulator, and stopped on exit.
#
# - schemathesis is pinned (ST_VERSION) and installed once into a virtualenv under
#   ~/.cache/consent-api/ (override with ST_VENV);
# - every check (`--checks all`), every phase (examples, coverage, fuzzing, stateful), a fixed
#   seed and a bounded number of examples per operation, so a run is reproducible and short;
# - two companies, each with its own API key, declared as peers (Web Fuzzing Commons auth file):
#   requests go as company A, and the `object_level_authorization` check replays A's reads of its
#   own objects as company B, failing if B gets them;
# - the server runs no background jobs: fuzzed webhook URLs are never called, and nothing but
#   this machine's loopback is ever contacted.
# Extra arguments go to `st run` (e.g. --max-examples 5). Report: target/schemathesis/.
set -euo pipefail
source "$(dirname "$0")/common.sh"
root=$(repo_root)
cd "$root"
require cargo "install Rust (https://rustup.rs)"
require python3 "install Python 3"

ST_VERSION=4.32.5
SEED=${ST_SEED:-20261121}
MAX_EXAMPLES=${ST_MAX_EXAMPLES:-100}
venv=${ST_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/consent-api/schemathesis-$ST_VERSION}
if ! "$venv/bin/st" --version 2>/dev/null | grep -q "$ST_VERSION"; then
  echo "installing schemathesis $ST_VERSION into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$ST_VERSION"
fi
# The live document must be valid OpenAPI (unique operation ids among the rest): checked with the
# validator generators rely on, pinned, in the same virtualenv.
OSV_VERSION=0.9.0
if ! "$venv/bin/pip" show openapi-spec-validator 2>/dev/null | grep "^Version: $OSV_VERSION$" >/dev/null; then
  echo "installing openapi-spec-validator $OSV_VERSION into $venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "openapi-spec-validator==$OSV_VERSION"
fi

cargo build --workspace --bins --quiet
bin=$root/target/debug

work=$(mktemp -d)
dir=$(cluster_dir "contract-$$")
sim_pid=""; api_pid=""
cleanup() {
  [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null || true
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  scripts/pg.sh stop "$dir"; rm -rf "$dir" "$work"
}
trap cleanup EXIT

admin=$(scripts/pg.sh start "$dir")

# Waits for a line starting with $2 in file $1; prints the rest of it.
wait_line() {
  local file=$1 prefix=$2 i
  for i in $(seq 1 300); do
    if grep -q "^$prefix" "$file" 2>/dev/null; then
      grep -m1 "^$prefix" "$file" | sed "s|^$prefix||"; return 0
    fi
    sleep 0.1
  done
  echo "error: '$prefix' never printed; see $file and its log" >&2; exit 1
}

cat > "$work/seed.json" <<'JSON'
{"empresas": [
  {"cnpj": "11.222.333/0001-81", "vinculos": [
    {"id": "a1a1a1a1-0000-4000-8000-000000000001", "casosDeUso": [
      {"templateId": "tpl-a-marketing", "titulo": "Marketing por e-mail"},
      {"templateId": "tpl-a-credito", "titulo": "Análise de crédito"}]}]},
  {"cnpj": "12.ABC.345/01DE-35", "vinculos": [
    {"id": "b1b1b1b1-0000-4000-8000-000000000003", "casosDeUso": [
      {"templateId": "tpl-b-seguro", "titulo": "Cotação de seguro"}]}]}
]}
JSON
mkdir -p target/schemathesis
"$bin/pgcc-sim" --port 0 --seed "$work/seed.json" > "$work/sim.out" 2> target/schemathesis/pgcc-sim.log &
sim_pid=$!
sim_url=$(wait_line "$work/sim.out" "pgcc-sim listening on ")

export APP_ENV=test
export APP__DATABASE__URL="$admin"
export APP__PGCC__BASE_URL="$sim_url"
export APP__SERVER__HOST=127.0.0.1 APP__SERVER__PORT=0
export APP__WORKERS__RUN_IN_SERVE=false
# Registrations keep succeeding through the run (the stateful phase follows their links); the
# quota itself is tested end to end (tests/tests/api/webhook_urls.rs).
export APP__WEBHOOKS__MAX_URLS_PER_COMPANY=1000
"$bin/consent-api" migrate 2>/dev/null
company_a=$("$bin/consent-api" company create --nome "Empresa A" --cnpj 11222333000181)
company_b=$("$bin/consent-api" company create --nome "Empresa B" --cnpj 12ABC34501DE35)
key_a=$("$bin/consent-api" api-key issue --empresa "$company_a" 2>/dev/null)
key_b=$("$bin/consent-api" api-key issue --empresa "$company_b" 2>/dev/null)

"$bin/consent-api" serve > "$work/api.out" 2> target/schemathesis/consent-api.log &
api_pid=$!
api_url=$(wait_line "$work/api.out" "consent-api listening on ")

# Both companies synchronized, and objects of each: a webhook URL (W1) registered before a consent
# request (so the request's event gives W1 a delivery), another (W2) for DELETE to remove. Company
# A's ids are handed to schemathesis below (its links cannot follow our envelopes' `data.id`), so
# the operations on one object reach their logic instead of answering 404 to random ids; company
# B's objects are what the isolation check tries to reach as A, and the other way round.
python3 - "$api_url" "$key_a" "$key_b" > "$work/objects.json" <<'PY'
import json, sys, urllib.request
api, keys = sys.argv[1], sys.argv[2:]
def call(method, path, key, body=None):
    req = urllib.request.Request(api + path, method=method, headers={"Api-Key": key, "Content-Type": "application/json"},
                                 data=None if body is None else json.dumps(body).encode())
    with urllib.request.urlopen(req) as r:
        return json.load(r)["data"]
objects = {}
for name, key, template in [("a", keys[0], "tpl-a-marketing"), ("b", keys[1], "tpl-b-seguro")]:
    call("POST", "/api/casos-de-uso/sincronizar", key)
    w1 = call("POST", "/api/webhook-urls", key, {"url": "https://hooks.invalid/consent"})["id"]
    w2 = call("POST", "/api/webhook-urls", key, {"url": "https://hooks.invalid/other"})["id"]
    consent = call("POST", "/api/solicitacao-consentimento/criar/ativo", key, {
        "casoDeUsoIdTemplate": template, "cpfTitular": "529.982.247-25", "modalidadeAcesso": "Direto",
        "tipoTitular": "PessoaFisica", "dataExpiracaoConsentimento": "2099-12-31T23:59:59Z",
        "dataTitularRespondeuConsentimento": "2026-01-10T12:00:00Z", "provaColeta": "assinatura:contrato"})["id"]
    hash_ = call("GET", f"/api/solicitacao-consentimento/{consent}", key)["hash"]
    deliveries = call("GET", f"/api/webhook-urls/{w1}/entregas", key)
    delivery = deliveries[0]["id"] if isinstance(deliveries, list) and deliveries else None
    objects[name] = {"consent": consent, "hash": hash_, "w1": w1, "w2": w2, "delivery": delivery}
json.dump(objects, sys.stdout)
PY

cat > "$work/auth.json" <<JSON
{"auth": [
  {"name": "empresa-a", "fixedHeaders": [{"name": "Api-Key", "value": "$key_a"}]},
  {"name": "empresa-b", "fixedHeaders": [{"name": "Api-Key", "value": "$key_b"}]}
]}
JSON
cat > "$work/schemathesis.toml" <<TOML
[auth.wfc]
path = "$work/auth.json"
user = "empresa-a"
peers = ["empresa-a", "empresa-b"]

# Schema-invalid data must be refused: the default statuses, plus 413 (a provaColeta over its
# maxLength also makes the body larger than http.body_limit_bytes, refused before decoding).
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]

TOML
python3 - "$work/objects.json" >> "$work/schemathesis.toml" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["a"]
ops = [
    ("GET /api/solicitacao-consentimento/{id}", {"id": a["consent"]}),
    ("POST /api/solicitacao-consentimento/{id}/revogar", {"id": a["consent"]}),
    ("GET /api/hash-consulta/{hash}", {"hash": a["hash"]}),
]
# The operations on one webhook URL are not pinned: DELETE (reached through the registration's
# link and through ids schemathesis collects from answers) may remove any of A's URLs, and a pin
# to a removed URL fails the stateful phase's "created resource not found". They are reached
# through the links of POST /api/webhook-urls instead.
for name, params in ops:
    print(f'\n[[operations]]\ninclude-name = "{name}"')
    print("parameters = { " + ", ".join(f'"path.{k}" = "{v}"' for k, v in params.items()) + " }")
PY

echo "openapi-spec-validator $OSV_VERSION against $api_url/openapi.json"
"$venv/bin/python" -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())' \
  "$api_url/openapi.json" > "$work/openapi.json"
"$venv/bin/openapi-spec-validator" "$work/openapi.json" || { echo "the live OpenAPI document is not valid"; exit 1; }

echo "schemathesis $ST_VERSION against $api_url/openapi.json (seed $SEED, at most $MAX_EXAMPLES examples per operation)"
# Schema-valid data must be accepted: schemathesis' positive_data_acceptance (422 not among the
# accepted statuses), run as positive_data_acceptance_except_listed (scripts/schemathesis_hooks.py),
# which excuses only a 422 whose every field error is a rule no JSON Schema can state (check
# digits, instants relative to now, the company's synchronized templates, state), the list of
# docs/decisions.md ("Contract fuzzing"). use_after_free runs the same way, as
# use_after_free_except_delivery_log: a removed URL's delivery log stays readable on purpose.
# negative_data_rejection runs as negative_data_rejection_except_files: an import's file whose
# lines break the line's schema is still taken, each bad line an error of its own (docs/imports.md).
status=0
PYTHONPATH="$root/scripts${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=schemathesis_hooks \
ST_TEMPLATES=tpl-a-marketing,tpl-a-credito \
"$venv/bin/st" --config-file "$work/schemathesis.toml" run "$api_url/openapi.json" \
  --checks all \
  --exclude-checks positive_data_acceptance,use_after_free,negative_data_rejection \
  --seed "$SEED" \
  --max-examples "$MAX_EXAMPLES" \
  --workers 1 \
  --request-timeout 15 \
  --max-redirects 0 \
  --report junit --report-dir target/schemathesis \
  "$@" || status=$?
echo "schemathesis exit status: $status (logs in target/schemathesis/)"

# Object-level authorization, explicitly: schemathesis' own check replays only reads whose ids it
# drew from the owner's earlier answers, which our envelopes rarely give it. So every operation
# on one object is also called here by the other company with the first one's ids: each must be
# 404 (indistinguishable from an unknown id), and the owner's object must be unchanged.
isolation=0
python3 - "$api_url" "$key_a" "$key_b" "$work/objects.json" <<'PY' || isolation=$?
import json, sys, urllib.error, urllib.request
api, key_a, key_b, objects = sys.argv[1], sys.argv[2], sys.argv[3], json.load(open(sys.argv[4]))
keys = {"a": key_a, "b": key_b}
def call(method, path, key, body=None):
    req = urllib.request.Request(api + path, method=method, headers={"Api-Key": key, "Content-Type": "application/json"},
                                 data=None if body is None else json.dumps(body).encode())
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)
failures, probes = [], 0
# Fresh webhook URLs with a delivery each: the fuzzing run may have removed the first ones.
templates = {"a": "tpl-a-marketing", "b": "tpl-b-seguro"}
for owner in ("a", "b"):
    status, body = call("POST", "/api/webhook-urls", keys[owner], {"url": "https://hooks.invalid/isolation"})
    assert status == 200, (status, body)
    objects[owner]["w1"] = body["data"]["id"]
    status, body = call("POST", "/api/solicitacao-consentimento/criar/ativo", keys[owner], {
        "casoDeUsoIdTemplate": templates[owner], "cpfTitular": "111.444.777-35", "modalidadeAcesso": "Direto",
        "tipoTitular": "PessoaFisica", "dataExpiracaoConsentimento": "2099-12-31T23:59:59Z",
        "dataTitularRespondeuConsentimento": "2026-01-10T12:00:00Z", "provaColeta": "assinatura:contrato"})
    assert status == 200, (status, body)
    deliveries = call("GET", f"/api/webhook-urls/{objects[owner]['w1']}/entregas", keys[owner])[1]["data"]
    objects[owner]["delivery"] = deliveries[0]["id"] if deliveries else None
for owner, other in [("a", "b"), ("b", "a")]:
    o = objects[owner]
    # The owner's view first (the A object W2 may have been deleted by the fuzzing run).
    before = call("GET", f"/api/solicitacao-consentimento/{o['consent']}", keys[owner])
    ops = [
        ("GET", f"/api/solicitacao-consentimento/{o['consent']}"),
        ("GET", f"/api/solicitacao-consentimento/{o['consent']}?mostrarCpf=true"),
        ("POST", f"/api/solicitacao-consentimento/{o['consent']}/revogar"),
        ("GET", f"/api/hash-consulta/{o['hash']}"),
        ("GET", f"/api/webhook-urls/{o['w1']}/entregas"),
        ("POST", f"/api/webhook-urls/{o['w1']}/rotacionar-segredo"),
        ("DELETE", f"/api/webhook-urls/{o['w1']}"),
    ]
    if o["delivery"]:
        ops.append(("POST", f"/api/webhook-urls/{o['w1']}/entregas/{o['delivery']}/reenviar"))
    for method, path in ops:
        probes += 1
        status, body = call(method, path, keys[other])
        if status != 404:
            failures.append(f"company {other} got {status} for company {owner}'s {method} {path}: {body}")
    listed = call("GET", "/api/solicitacao-consentimento?limite=500", keys[other])[1]["data"]["itens"]
    if any(item["id"] == o["consent"] for item in listed):
        failures.append(f"company {other} lists company {owner}'s consent request")
    hooks = call("GET", "/api/webhook-urls", keys[other])[1]["data"]
    if any(h.get("id") in (o["w1"], o["w2"]) for h in hooks):
        failures.append(f"company {other} lists company {owner}'s webhook URLs")
    after = call("GET", f"/api/solicitacao-consentimento/{o['consent']}", keys[owner])
    if before != after:
        failures.append(f"company {owner}'s consent request changed under company {other}'s calls")
    if call("GET", f"/api/webhook-urls/{o['w1']}/entregas", keys[owner])[0] != 200:
        failures.append(f"company {owner}'s webhook URL is gone after company {other}'s calls")
for f in failures:
    print("object-level authorization FAILED:", f)
print(f"object-level authorization: {probes} cross-company calls, {len(failures)} failures")
sys.exit(1 if failures else 0)
PY
[ "$status" -eq 0 ] && [ "$isolation" -eq 0 ]
