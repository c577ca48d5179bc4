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
