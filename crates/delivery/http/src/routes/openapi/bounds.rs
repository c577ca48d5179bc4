//! Bounds and headers the OWASP API Security ruleset asks of the document (`.spectral.yaml`,
//! `make lint-contract`), stated where utoipa's annotations cannot say them once for all:
//! every one is what the server does, never a wish (schemathesis checks the same document).

use serde_json::{json, Map, Value};

/// Status codes answered before the `Api-Key` is resolved, or as soon as it is (403: a route
/// outside the key's scopes, refused before the company's bucket is asked): no bucket counts
/// them and they never carry the rate-limit headers (`crate::rate_limit::track`).
const UNCOUNTED: [&str; 5] = ["401", "403", "408", "413", "415"];

pub(super) fn apply(doc: &mut Value) {
    if let Some(paths) = doc["paths"].as_object_mut() {
        for (path, item) in paths.iter_mut() {
            if !path.starts_with("/api/") {
                continue;
            }
            for operation in item
                .as_object_mut()
                .into_iter()
                .flat_map(|m| m.values_mut())
            {
                bound_uuid_parameters(operation);
                declare_rate_limit_headers(operation);
            }
        }
    }
    // Every listed server is the public API of one environment (none is internal).
    if let Some(servers) = doc["servers"].as_array_mut() {
        for server in servers.iter_mut().filter_map(Value::as_object_mut) {
            server.insert("x-internal".into(), Value::Bool(false));
        }
    }
}

/// A UUID parameter (path or query) is 36 characters in the hyphenated form `format: uuid`
/// names; anything else is refused (404 for an id in the path, 400 in the query).
fn bound_uuid_parameters(operation: &mut Value) {
    let Some(parameters) = operation["parameters"].as_array_mut() else {
        return;
    };
    for parameter in parameters {
        let schema = &mut parameter["schema"];
        if schema["format"] == "uuid" && schema.get("maxLength").is_none() {
            schema["maxLength"] = json!(36);
        }
    }
}

/// `RateLimit` and `RateLimit-Policy` on every 2xx and 4xx answer a company's bucket counted
/// (the 429 declares them already, with `Retry-After`).
fn declare_rate_limit_headers(operation: &mut Value) {
    let Some(responses) = operation["responses"].as_object_mut() else {
        return;
    };
    for (code, response) in responses.iter_mut() {
        let counted =
            (code.starts_with('2') || code.starts_with('4')) && !UNCOUNTED.contains(&code.as_str());
        if !counted || response.get("$ref").is_some() {
            continue;
        }
        let headers = response
            .as_object_mut()
            .expect("a response is an object")
            .entry("headers")
            .or_insert_with(|| Value::Object(Map::new()));
        let headers = headers.as_object_mut().expect("headers is an object");
        for (name, description) in [
            (
                "RateLimit",
                "`limit=<bucket size>, remaining=<left>, reset=<seconds until full>` \
                 (draft-ietf-httpapi-ratelimit-headers-07): the company's quota after this \
                 request. Sent whenever the request was counted against the company's quota \
                 (its Api-Key resolved) and rate limiting is on.",
            ),
            (
                "RateLimit-Policy",
                "`<requests per second>;w=1;burst=<bucket size>`, e.g. `50;w=1;burst=100`; sent \
                 with `RateLimit`.",
            ),
        ] {
            headers.entry(name).or_insert_with(|| {
                json!({
                    "description": description,
                    "schema": {"type": "string", "maxLength": 128},
                })
            });
        }
    }
}
