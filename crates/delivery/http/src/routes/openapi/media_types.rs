//! Every `/api` operation documents the media types the server really speaks: request bodies in
//! the three JSON media types [`crate::media::is_json`] accepts, and every answer with a body in
//! the three media types [`crate::media::negotiate`] labels it with (errors included). Applied
//! to the whole document in one place, so a new route gets them without saying so.

use utoipa::openapi::path::Operation;
use utoipa::openapi::{Content, RefOr};

use crate::media::{REQUEST_MEDIA_TYPES, RESPONSE_MEDIA_TYPES};

/// Copies the schema an operation declares (for `application/json`, or its first media type)
/// to every other media type served.
pub(super) fn declare_served(operation: &mut Operation) {
    // a file (an import: CSV or JSON Lines, docs/imports.md) is that file's types only
    if let Some(body) = operation
        .request_body
        .as_mut()
        .filter(|b| b.content.contains_key("application/json"))
    {
        let declared = body
            .content
            .get("application/json")
            .or_else(|| body.content.values().next());
        if let Some(template) = declared.map(without_examples) {
            for media_type in REQUEST_MEDIA_TYPES {
                body.content
                    .entry(media_type.to_owned())
                    .or_insert_with(|| template.clone());
            }
        }
    }
    for response in operation.responses.responses.values_mut() {
        let RefOr::T(response) = response else {
            continue;
        };
        // a plain-text answer (the audit checkpoint, a signed note) is that text only, and a
        // JSON-LD document (a consent record, docs/records.md) is JSON-LD only: neither is
        // negotiated like the JSON answers; nor is a gzipped export page
        if response.content.len() == 1
            && (response.content.contains_key("text/plain")
                || response.content.contains_key("application/octet-stream")
                || response
                    .content
                    .contains_key(crate::routes::records::JSON_LD))
        {
            continue;
        }
        // nor is a file (an import's errors: JSON Lines or CSV; an evidence file's bytes)
        if response.content.contains_key("text/csv")
            || response.content.contains_key("application/pdf")
        {
            continue;
        }
        let declared = response
            .content
            .get("application/json")
            .or_else(|| response.content.values().next());
        if let Some(template) = declared.map(without_examples) {
            for media_type in RESPONSE_MEDIA_TYPES {
                response
                    .content
                    .entry(media_type.to_owned())
                    .or_insert_with(|| template.clone());
            }
        }
    }
}

/// The schema alone: examples are added to each media type afterwards (`examples::apply`).
fn without_examples(content: &Content) -> Content {
    let mut content = content.clone();
    content.example = None;
    content.examples.clear();
    content
}
