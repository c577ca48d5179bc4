//! OpenAPI `links`: from the answer that gives an id to every operation that takes it, so that
//! stateful contract tests (schemathesis' stateful phase) and generators chain them: a creation
//! leads to the read and the revocation, a registration to everything done to that URL, a read
//! to the hash lookup, the delivery log to a replay.
//!
//! Derived from the paths, not listed per target: an operation added under a resource's path
//! (say `PATCH /api/webhook-urls/{webhookUrlId}`) is linked from the operation that creates the
//! resource without a word here. Written into the serialized document (utoipa 5.5 serializes a
//! Link's `operationId` as `operation_id`, which is not OpenAPI).

use serde_json::{json, Map, Value};

/// An answer that names a resource: `by`'s 200 carries `value` (a runtime expression), which is
/// the path parameter `param` of every operation on `resource` and below it.
pub struct Produces {
    pub by: &'static str,
    pub param: &'static str,
    pub value: &'static str,
    pub resource: &'static str,
}

pub const PRODUCERS: &[Produces] = &[
    Produces {
        by: "criarSolicitacaoAtiva",
        param: "id",
        value: "$response.body#/data/id",
        resource: "/api/solicitacao-consentimento/{id}",
    },
    Produces {
        by: "criarSolicitacaoPendente",
        param: "id",
        value: "$response.body#/data/id",
        resource: "/api/solicitacao-consentimento/{id}",
    },
    Produces {
        by: "obterSolicitacao",
        param: "hash",
        value: "$response.body#/data/hash",
        resource: "/api/hash-consulta/{hash}",
    },
    Produces {
        by: "registrarWebhookUrl",
        param: "webhookUrlId",
        value: "$response.body#/data/id",
        resource: "/api/webhook-urls/{webhookUrlId}",
    },
    Produces {
        by: "listarEntregas",
        param: "entregaId",
        value: "$response.body#/data/0/id",
        resource: "/api/webhook-urls/{webhookUrlId}/entregas/{entregaId}",
    },
];

/// The names in `{...}` of `path`.
fn path_params(path: &str) -> Vec<&str> {
    path.split('/')
        .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
        .collect()
}

/// `(operationId, path, method)` of every operation of `doc`.
fn operations(doc: &Value) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            if let Some(id) = operation["operationId"].as_str() {
                found.push((id.to_owned(), path.clone(), method.clone()));
            }
        }
    }
    found
}

/// Adds the links of [`PRODUCERS`] to the 200 answers of the producing operations.
pub(super) fn apply(doc: &mut Value) {
    let operations = operations(doc);
    for producer in PRODUCERS {
        let Some((_, source_path, source_method)) =
            operations.iter().find(|(id, _, _)| id == producer.by)
        else {
            continue;
        };
        let passed_on = path_params(source_path);
        let mut links = Map::new();
        for (target, path, _) in &operations {
            let on_resource =
                path == producer.resource || path.starts_with(&format!("{}/", producer.resource));
            let params = path_params(path);
            // every other parameter must come from the producer's own path
            let reachable = params
                .iter()
                .all(|p| *p == producer.param || passed_on.contains(p));
            if !on_resource || !reachable || target == producer.by {
                continue;
            }
            let parameters: Map<String, Value> = params
                .iter()
                .map(|p| {
                    let value = if *p == producer.param {
                        producer.value.to_owned()
                    } else {
                        format!("$request.path.{p}")
                    };
                    ((*p).to_owned(), Value::String(value))
                })
                .collect();
            links.insert(
                target.clone(),
                json!({
                    "operationId": target,
                    "parameters": parameters,
                    "description": format!("`{}` is the `{}` of `{target}`.", producer.value, producer.param),
                }),
            );
        }
        let ok = &mut doc["paths"][source_path][source_method]["responses"]["200"];
        if let Some(ok) = ok.as_object_mut() {
            let existing = ok.entry("links").or_insert_with(|| json!({}));
            if let Some(existing) = existing.as_object_mut() {
                existing.extend(links);
            }
        }
    }
}
