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
    let motivo = &schemas["RevogarSolicitacao"]["properties"]["motivo"];
    assert_eq!(
        (&motivo["minLength"], &motivo["maxLength"]),
        (&1.into(), &500.into())
    );
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
