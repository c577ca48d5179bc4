//! The OpenAPI document is generated from the code; these check that what it generates is a
//! coherent document a client generator can consume.

use serde_json::Value;

fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                if k == "$ref" {
                    out.push(child.as_str().unwrap().to_owned());
                } else {
                    refs(child, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| refs(i, out)),
        _ => {}
    }
}

#[test]
fn every_reference_in_the_document_resolves_to_a_component() {
    let doc = delivery_http::openapi_json();
    let mut found = Vec::new();
    refs(&doc, &mut found);
    assert!(!found.is_empty());
    for r in found {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("unexpected ref {r}"));
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "dangling $ref {r}"
        );
    }
}

#[test]
fn the_document_is_titled_as_the_public_api_version_dev() {
    let doc = delivery_http::openapi_json();
    assert_eq!(doc["info"]["version"], "dev");
    assert!(doc["info"]["title"]
        .as_str()
        .unwrap()
        .contains("Public API"));
}

#[test]
fn the_list_documents_its_etag_the_if_none_match_header_and_the_304() {
    let doc = delivery_http::openapi_json();
    let list = &doc["paths"]["/api/casos-de-uso"]["get"];

    let params = list["parameters"].as_array().unwrap();
    assert!(params
        .iter()
        .any(|p| p["name"] == "If-None-Match" && p["in"] == "header"));
    assert!(list["responses"]["200"]["headers"]["ETag"].is_object());
    assert!(list["responses"]["304"]["headers"]["ETag"].is_object());
    assert!(list["responses"]["304"]["content"].is_null(), "no body");
}

/// `(operationId, "METHOD /path")` of every operation, in the document's order of paths.
fn operation_ids(doc: &Value) -> Vec<(String, String)> {
    let mut ids = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if let Some(id) = op["operationId"].as_str() {
                ids.push((id.to_owned(), format!("{} {path}", method.to_uppercase())));
            }
        }
    }
    ids
}

#[test]
fn every_operation_has_the_unique_camel_case_operation_id_docs_api_md_lists() {
    let doc = delivery_http::openapi_json();
    let mut found = operation_ids(&doc);
    let operations: usize = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| item.as_object().unwrap().len())
        .sum();
    assert_eq!(found.len(), operations, "an operation without operationId");
    for (id, _) in &found {
        assert!(
            id.chars().next().unwrap().is_ascii_lowercase()
                && id.chars().all(|c| c.is_ascii_alphanumeric()),
            "{id} is not camelCase"
        );
    }
    // the contract table of docs/api.md, "Operation ids"
    let documented: Vec<(String, String)> = include_str!("../../../../docs/api.md")
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let id = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let op = cells.get(2)?.strip_prefix('`')?.strip_suffix('`')?;
            (id.chars().next()?.is_ascii_lowercase() && op.contains(" /api/"))
                .then(|| (id.to_owned(), op.to_owned()))
        })
        .collect();
    let mut documented_sorted = documented.clone();
    documented_sorted.sort();
    found.sort();
    assert_eq!(found, documented_sorted);
    let mut unique: Vec<&String> = documented.iter().map(|(id, _)| id).collect();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), documented.len(), "an operationId twice");
}

#[test]
fn issue_14_operations_document_their_optional_body_enums_and_reason() {
    let doc = delivery_http::openapi_json();
    let schemas = &doc["components"]["schemas"];

    // revogar: an optional body with a bounded reason; the reason in the history
    let revogar = &doc["paths"]["/api/solicitacao-consentimento/{id}/revogar"]["post"];
    assert_eq!(revogar["requestBody"]["required"], false);
    for media in ["application/json", "text/json", "application/*+json"] {
        assert!(
            revogar["requestBody"]["content"][media].is_object(),
            "{media}"
        );
    }
    // the text rule, inline (beside `null`: the field is optional)
    let motivo =
        serde_json::to_string(&schemas["RevogarSolicitacao"]["properties"]["motivo"]).unwrap();
    for rule in [
        "\"minLength\":1",
        "\"maxLength\":500",
        "\"pattern\"",
        "\"null\"",
    ] {
        assert!(motivo.contains(rule), "{rule} in {motivo}");
    }
    assert_eq!(
        schemas["MudancaDeStatus"]["properties"]["motivo"]["maxLength"],
        500
    );

    // the event types a URL may choose: the domain's list, without webhook.teste
    let assinavel: Vec<&str> = schemas["TipoEventoAssinavel"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let expected: Vec<&str> = domain::EventType::SUBSCRIBABLE
        .iter()
        .map(|t| t.as_str())
        .collect();
    assert_eq!(assinavel, expected);
    for schema in [
        "RegistrarWebhookUrl",
        "AlterarEventosWebhookUrl",
        "WebhookUrlRegistrada",
    ] {
        assert_eq!(
            schemas[schema]["properties"]["eventos"]["items"]["$ref"],
            "#/components/schemas/TipoEventoAssinavel",
            "{schema}"
        );
    }
    assert_eq!(
        schemas["AlterarEventosWebhookUrl"]["required"],
        serde_json::json!(["eventos"])
    );
    let tipo = doc["paths"]["/api/eventos"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "tipo")
        .unwrap()
        .clone();
    assert_eq!(
        tipo["schema"]["$ref"],
        "#/components/schemas/TipoEventoAssinavel"
    );
    // every new operation answers 429 and has its operation id
    for (path, method, id) in [
        ("/api/eventos", "get", "listarEventos"),
        (
            "/api/webhook-urls/{webhookUrlId}",
            "patch",
            "alterarEventosWebhookUrl",
        ),
        (
            "/api/webhook-urls/{webhookUrlId}/testar",
            "post",
            "testarWebhookUrl",
        ),
    ] {
        let op = &doc["paths"][path][method];
        assert_eq!(op["operationId"], id);
        assert!(op["responses"]["429"].is_object(), "{method} {path}");
    }
}

/// Every operation object of `section` (`paths` or `webhooks`): `(method, path, operation)`.
fn operations_of<'a>(doc: &'a Value, section: &str) -> Vec<(String, String, &'a Value)> {
    let mut found = Vec::new();
    for (path, item) in doc[section].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            found.push((method.clone(), path.clone(), op));
        }
    }
    found
}

fn media_types(content: &Value) -> Vec<String> {
    let mut found: Vec<String> = content.as_object().unwrap().keys().cloned().collect();
    found.sort();
    found
}

/// The media types an evidence file may have, sorted (`domain::EVIDENCE_MEDIA_TYPES`).
const EVIDENCE_TYPES: &[&str] = &[
    "application/pdf",
    "audio/mpeg",
    "audio/ogg",
    "audio/wav",
    "image/jpeg",
    "image/png",
    "video/mp4",
];

#[test]
fn every_api_answer_with_a_body_and_every_body_declares_the_media_types_served() {
    let doc = delivery_http::openapi_json();
    let mut answers = 0;
    for (method, path, op) in operations_of(&doc, "paths") {
        if !path.starts_with("/api/") {
            continue;
        }
        if let Some(content) = op["requestBody"].get("content") {
            // an import's file is CSV or JSON Lines only (docs/imports.md)
            let expected: &[&str] = if path == "/api/importacoes" {
                &["application/x-ndjson", "text/csv"]
            } else if path.contains("arquivos") {
                // an evidence file's bytes, of one of the listed media types (docs/evidencias.md)
                EVIDENCE_TYPES
            } else {
                &["application/*+json", "application/json", "text/json"]
            };
            assert_eq!(
                media_types(content),
                expected,
                "{method} {path} request body"
            );
        }
        for (status, response) in op["responses"].as_object().unwrap() {
            if let Some(content) = response.get("content") {
                answers += 1;
                if (path.as_str(), status.as_str()) == ("/api/auditoria/checkpoint", "200") {
                    // the checkpoint is a signed note: plain text only, never an envelope
                    assert_eq!(media_types(content), ["text/plain"]);
                    continue;
                }
                if (path.as_str(), status.as_str()) == ("/api/importacoes/{id}/erros", "200") {
                    // an import's errors are a file: JSON Lines or CSV, never an envelope
                    assert_eq!(media_types(content), ["application/x-ndjson", "text/csv"]);
                    continue;
                }
                if (path.as_str(), status.as_str()) == ("/api/exportacoes", "200") {
                    // an export's page is a gzip file (docs/records.md, "Exports")
                    assert_eq!(media_types(content), ["application/octet-stream"]);
                    continue;
                }
                if (path.as_str(), status.as_str(), method.as_str())
                    == (
                        "/api/solicitacao-consentimento/{id}/arquivos/{sha256}",
                        "200",
                        "get",
                    )
                {
                    // an evidence file's download is its bytes, never an envelope
                    assert_eq!(media_types(content), EVIDENCE_TYPES);
                    continue;
                }
                if (path.as_str(), status.as_str())
                    == ("/api/solicitacao-consentimento/{id}/registro", "200")
                {
                    // the consent record is a JSON-LD document, never an envelope
                    assert_eq!(media_types(content), ["application/ld+json"]);
                    continue;
                }
                assert_eq!(
                    media_types(content),
                    ["application/json", "text/json", "text/plain"],
                    "{method} {path} {status}"
                );
                let schemas: Vec<&Value> = content
                    .as_object()
                    .unwrap()
                    .values()
                    .map(|c| &c["schema"])
                    .collect();
                assert!(
                    schemas.iter().all(|s| *s == schemas[0]),
                    "{method} {path} {status}: one schema for every media type"
                );
            }
        }
    }
    // creations' and errors' answers included (they were application/json only)
    assert!(answers > 100, "{answers}");
    let created = &doc["paths"]["/api/solicitacao-consentimento/criar/ativo"]["post"]["responses"];
    for status in ["200", "401", "422", "502"] {
        assert_eq!(
            media_types(&created[status]["content"]),
            ["application/json", "text/json", "text/plain"],
            "criar/ativo {status}"
        );
    }
}

#[test]
fn the_webhooks_section_documents_every_event_type_with_its_payload() {
    let doc = delivery_http::openapi_json();
    assert_eq!(doc["openapi"], "3.1.0");
    let webhooks = doc["webhooks"].as_object().unwrap();
    assert_eq!(webhooks.len(), domain::EventType::ALL.len());
    for tipo in domain::EventType::ALL {
        let post = &webhooks[tipo.as_str()]["post"];
        let schema_ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            .as_str()
            .unwrap_or_else(|| panic!("{}: no body schema", tipo.as_str()));
        let name = schema_ref.strip_prefix("#/components/schemas/").unwrap();
        let body = &doc["components"]["schemas"][name];
        assert_eq!(body["properties"]["type"]["const"], tipo.as_str());
        assert_eq!(
            body["required"],
            serde_json::json!(["type", "timestamp", "data"])
        );
        let data = body["properties"]["data"]["$ref"].as_str().unwrap();
        let expected = match tipo {
            domain::EventType::UseCasesSynced => "#/components/schemas/Sincronizacao",
            domain::EventType::UseCaseChanged => "#/components/schemas/CasoDeUsoAlterado",
            domain::EventType::PgccUnavailable | domain::EventType::PgccRestored => {
                "#/components/schemas/MudancaStatusPgcc"
            }
            domain::EventType::WebhookUrlDisabled => "#/components/schemas/UrlDesativada",
            domain::EventType::IntegrityIncident => "#/components/schemas/IncidenteIntegridade",
            domain::EventType::AuditCheckpoint => "#/components/schemas/CheckpointAuditoria",
            domain::EventType::ImportCompleted => "#/components/schemas/ImportacaoConcluida",
            domain::EventType::WebhookTest => "#/components/schemas/TesteNoEvento",
            _ => "#/components/schemas/SolicitacaoNoEvento",
        };
        assert_eq!(data, expected, "{}", tipo.as_str());
        let headers: Vec<&str> = post["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            headers,
            ["webhook-id", "webhook-timestamp", "webhook-signature"]
        );
    }
}

#[test]
fn webhook_operation_ids_are_unique_camel_case_and_listed_in_docs_api_md() {
    let doc = delivery_http::openapi_json();
    let in_paths: Vec<(String, String)> = operation_ids(&doc);
    let documented = include_str!("../../../../docs/api.md");
    for (event, id) in delivery_http::routes::openapi::webhooks::operation_ids() {
        let op = &doc["webhooks"][event]["post"];
        assert_eq!(op["operationId"], id);
        assert!(
            id.chars().next().unwrap().is_ascii_lowercase()
                && id.chars().all(|c| c.is_ascii_alphanumeric()),
            "{id}"
        );
        assert!(
            !in_paths.iter().any(|(path_id, _)| path_id == id),
            "{id} is also a path operation's id"
        );
        assert!(
            documented.contains(&format!("| `{id}` | `{event}` |")),
            "docs/api.md does not list {id} for {event}"
        );
    }
}

#[test]
fn each_creation_and_registration_links_to_every_operation_that_takes_its_id() {
    let doc = delivery_http::openapi_json();
    let links = |path: &str, method: &str| -> Vec<(String, Value)> {
        doc["paths"][path][method]["responses"]["200"]["links"]
            .as_object()
            .unwrap_or_else(|| panic!("{method} {path}: no links"))
            .iter()
            .map(|(name, link)| {
                assert_eq!(link["operationId"], name.as_str());
                (name.clone(), link["parameters"].clone())
            })
            .collect()
    };
    let by_id = serde_json::json!({"id": "$response.body#/data/id"});
    for creation in ["ativo", "pendente"] {
        let found = links(
            &format!("/api/solicitacao-consentimento/criar/{creation}"),
            "post",
        );
        assert_eq!(
            found,
            [
                ("enviarArquivoSolicitacao".to_owned(), by_id.clone()),
                ("listarArquivosSolicitacao".to_owned(), by_id.clone()),
                ("obterProvasSolicitacao".to_owned(), by_id.clone()),
                ("obterReciboSolicitacao".to_owned(), by_id.clone()),
                ("obterRegistroSolicitacao".to_owned(), by_id.clone()),
                ("obterSolicitacao".to_owned(), by_id.clone()),
                ("revogarSolicitacao".to_owned(), by_id.clone())
            ]
        );
    }
    let by_url = serde_json::json!({"webhookUrlId": "$response.body#/data/id"});
    let names: Vec<String> = links("/api/webhook-urls", "post")
        .into_iter()
        .map(|(name, params)| {
            assert_eq!(params, by_url, "{name}");
            name
        })
        .collect();
    // every operation under /api/webhook-urls/{webhookUrlId} taking only that id
    let mut expected: Vec<String> = operations_of(&doc, "paths")
        .into_iter()
        .filter(|(_, path, _)| {
            path.starts_with("/api/webhook-urls/{webhookUrlId}") && path.matches('{').count() == 1
        })
        .map(|(_, _, op)| op["operationId"].as_str().unwrap().to_owned())
        .collect();
    expected.sort();
    assert_eq!(names, expected);
    assert!(names.contains(&"removerWebhookUrl".to_owned()));
    assert!(names.contains(&"rotacionarSegredoWebhookUrl".to_owned()));
    assert!(names.contains(&"listarEntregas".to_owned()));
    // and on: a read to the hash lookup, the delivery log to a replay
    assert_eq!(
        links("/api/solicitacao-consentimento/{id}", "get"),
        [(
            "obterPorHash".to_owned(),
            serde_json::json!({"hash": "$response.body#/data/hash"})
        )]
    );
    assert_eq!(
        links("/api/webhook-urls/{webhookUrlId}/entregas", "get"),
        [(
            "reenviarEntrega".to_owned(),
            serde_json::json!({"entregaId": "$response.body#/data/0/id",
                               "webhookUrlId": "$request.path.webhookUrlId"})
        )]
    );
}

/// `schema` with a `$ref` followed.
fn resolved<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(r) => &doc["components"]["schemas"][r.strip_prefix("#/components/schemas/").unwrap()],
        None => schema,
    }
}

#[test]
fn every_required_text_of_a_request_body_states_its_rules() {
    let doc = delivery_http::openapi_json();
    let mut checked = 0;
    let mut bodies: Vec<&Value> = Vec::new();
    for (_, path, op) in operations_of(&doc, "paths") {
        if let Some(schema) = op["requestBody"]["content"]["application/json"].get("schema") {
            let body = resolved(&doc, schema);
            bodies.push(body);
            // a batch's items too
            if let Some(items) = body["properties"]["itens"].get("items") {
                bodies.push(resolved(&doc, items));
            }
            assert!(!path.is_empty());
        }
    }
    for body in bodies {
        for name in body["required"].as_array().into_iter().flatten() {
            let name = name.as_str().unwrap();
            let field = resolved(&doc, &body["properties"][name]);
            if field["type"] != "string" || field.get("enum").is_some() {
                continue;
            }
            checked += 1;
            let stated = field.get("format").is_some()
                || (field["minLength"].as_u64() >= Some(1) && field.get("pattern").is_some());
            assert!(stated, "{name}: {field}");
        }
    }
    assert!(checked >= 10, "{checked}");
    let schemas = &doc["components"]["schemas"];
    let cpf = delivery_http::dto::text_rules::CPF_PATTERN;
    assert_eq!(
        schemas["CriarSolicitacaoAtiva"]["properties"]["cpfTitular"]["pattern"],
        cpf
    );
    assert_eq!(
        schemas["ConsultarConsentimento"]["properties"]["cpfTitular"]["pattern"],
        cpf
    );
    assert_eq!(
        schemas["CriarSolicitacaoPendente"]["properties"]["cnpjAnuente"]["oneOf"][1]["pattern"],
        delivery_http::dto::text_rules::CNPJ_PATTERN
    );
    let url = &schemas["RegistrarWebhookUrl"]["properties"]["url"];
    assert_eq!(url["format"], "uri");
    assert_eq!(url["maxLength"], 2048);
    let list = &doc["paths"]["/api/solicitacao-consentimento"]["get"]["parameters"];
    let param = |name: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap()["schema"]
            .clone()
    };
    assert_eq!(param("cpfTitular")["pattern"], cpf);
    assert_eq!(param("cursor")["minLength"], 1);
    // Indireto requires cnpjAnuente, stated with if/then
    assert_eq!(
        schemas["CriarSolicitacaoAtiva"]["then"]["required"],
        serde_json::json!(["cnpjAnuente"])
    );
}

/// What `.spectral.yaml` (the OWASP API Security ruleset) asks, as the server does it: the
/// rate-limit headers on every counted 2xx and 4xx answer, bounded `Api-Key` and UUID parameters,
/// a bounded integer `Retry-After`, no internal server.
#[test]
fn counted_answers_declare_the_rate_limit_headers_and_inputs_are_bounded() {
    let doc = delivery_http::openapi_json();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for (code, response) in op["responses"].as_object().unwrap() {
                let counted = (code.starts_with('2') || code.starts_with('4'))
                    && !["401", "403", "408", "413", "415"].contains(&code.as_str());
                assert_eq!(
                    response["headers"]["RateLimit"].is_object(),
                    counted,
                    "{method} {path} {code}"
                );
                if let Some(retry) = response["headers"].get("Retry-After") {
                    assert_eq!(retry["schema"]["maximum"], 86_400, "{method} {path} {code}");
                    assert_eq!(retry["schema"]["format"], "int64");
                }
            }
            for parameter in op["parameters"].as_array().unwrap() {
                let schema = &parameter["schema"];
                if parameter["name"] == "Api-Key" {
                    // a sandbox key (`cak_test_`, 82) is the longest; a real one is 77
                    assert_eq!(schema["maxLength"], 82);
                }
                if schema["format"] == "uuid" {
                    assert_eq!(schema["maxLength"], 36, "{method} {path}");
                }
            }
        }
    }
    assert_eq!(doc["servers"][0]["x-internal"], false);
}
