//! Media types: which request bodies count as JSON, how decoding failures become envelopes, and
//! which of the three response media types of the spec a client gets.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::{JsonPayloadError, PayloadError};
use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{mime, web, Error, FromRequest, ResponseError};

use crate::api_key::ApiKeyHeader;
use crate::error::ApiError;

/// The request body media types documented for every body: what [`is_json`] accepts
/// (`application/*+json` standing for every structured `+json` suffix).
pub const REQUEST_MEDIA_TYPES: [&str; 3] = ["application/json", "text/json", "application/*+json"];

/// The response media types [`negotiate`] labels every JSON answer with, errors included
/// (without the `; charset=utf-8` the `text/*` ones carry).
pub const RESPONSE_MEDIA_TYPES: [&str; 3] = ["application/json", "text/json", "text/plain"];

/// `application/json`, `text/json` and any `application/*+json` are JSON; anything else is a 415.
pub fn is_json(m: &mime::Mime) -> bool {
    let application_json = m.subtype() == mime::JSON || m.suffix() == Some(mime::JSON);
    let text_json = m.subtype() == mime::JSON && m.suffix().is_none();
    (m.type_() == mime::APPLICATION && application_json) || (m.type_() == mime::TEXT && text_json)
}

/// Body decoding shared by every route that takes JSON.
pub fn json_config(limit: usize) -> web::JsonConfig {
    web::JsonConfig::default()
        .limit(limit)
        .content_type(|m| is_json(&m))
        .content_type_required(true)
        .error_handler(move |err, _req| decoding_error(err, limit).into())
}

fn decoding_error(err: JsonPayloadError, limit: usize) -> ApiError {
    match err {
        JsonPayloadError::ContentType => ApiError::UnsupportedMediaType,
        JsonPayloadError::Overflow { .. } | JsonPayloadError::OverflowKnownLength { .. } => {
            ApiError::PayloadTooLarge { limit }
        }
        JsonPayloadError::Deserialize(e) => ApiError::BadRequest(describe_serde_error(&e)),
        JsonPayloadError::Payload(e) => ApiError::from_payload_error(&e, limit),
        other => ApiError::BadRequest(format!("corpo ilegível ({other})")),
    }
}

/// serde_json's own messages may quote the submitted value (a CPF, a proof of consent), so only
/// the kind of error, its position and the name of an unknown or missing field are passed on.
pub fn describe_serde_error(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let at = format!("linha {}, coluna {}", e.line(), e.column());
    match e.classify() {
        Category::Syntax => format!("JSON malformado ({at})"),
        Category::Eof => "JSON incompleto".to_owned(),
        Category::Io => "corpo ilegível".to_owned(),
        Category::Data => {
            let text = e.to_string();
            let quoted = text.split('`').nth(1);
            if text.starts_with("unknown field") {
                format!("campo desconhecido `{}` ({at})", quoted.unwrap_or("?"))
            } else if text.starts_with("missing field") {
                format!("campo obrigatório ausente `{}`", quoted.unwrap_or("?"))
            } else {
                format!("valor de tipo inválido ({at})")
            }
        }
    }
}

/// Whether `bytes` nests arrays and objects more than `max_depth` deep. A small scanner over the
/// raw bytes: brackets inside strings (escapes included) do not count, and it stops at the first
/// bracket past the limit, so a hostile body costs one pass and no allocation. It does not
/// validate JSON: malformed bodies are left to the decoder, which answers 400 anyway.
pub fn json_too_deep(bytes: &[u8], max_depth: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max_depth {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The limits [`limit_json_depth`] applies, registered as app data by [`crate::HttpApp`].
#[derive(Debug, Clone, Copy)]
pub struct JsonLimits {
    pub max_depth: usize,
    pub body_limit: usize,
}

/// Middleware of the resources that take a JSON body: answers 400 (envelope) to a body nested
/// deeper than [`JsonLimits::max_depth`], before any decoder sees it. Only bodies that the JSON
/// extractor would read are looked at (a POST, PUT or PATCH with a JSON Content-Type, a usable
/// `Api-Key` so a keyless request stays 401 whatever its body, a declared length within the
/// limit); the bytes read are handed back to the request unchanged. A body over the limit is 413,
/// as the extractor would answer.
pub async fn limit_json_depth(
    mut req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, Error> {
    let Some(&JsonLimits {
        max_depth,
        body_limit,
    }) = req.app_data::<web::Data<JsonLimits>>().map(|d| d.get_ref())
    else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    let with_body = matches!(
        *req.method(),
        actix_web::http::Method::POST
            | actix_web::http::Method::PUT
            | actix_web::http::Method::PATCH
    );
    let json_body = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<mime::Mime>().ok())
        .is_some_and(|m| is_json(&m));
    let declared_len = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok());
    let keyed = ApiKeyHeader::from_request(req.request(), &mut Payload::None)
        .await
        .is_ok();
    if !with_body || !json_body || !keyed || declared_len.is_some_and(|n| n > body_limit || n == 0)
    {
        return Ok(next.call(req).await?.map_into_left_body());
    }
    let payload = req.extract::<web::Payload>().await?;
    let refusal = match payload.to_bytes_limited(body_limit).await {
        Err(_) => ApiError::PayloadTooLarge { limit: body_limit },
        Ok(Err(e)) => match e.as_error::<PayloadError>() {
            Some(e) => ApiError::from_payload_error(e, body_limit),
            None => ApiError::BadRequest(format!("corpo ilegível ({e})")),
        },
        Ok(Ok(bytes)) if json_too_deep(&bytes, max_depth) => ApiError::BadRequest(format!(
            "JSON aninhado além de {max_depth} níveis de objetos e listas"
        )),
        Ok(Ok(bytes)) => {
            req.set_payload(Payload::from(bytes));
            return Ok(next.call(req).await?.map_into_left_body());
        }
    };
    Ok(req
        .into_response(refusal.error_response())
        .map_into_right_body())
}

/// The response media type the request's `Accept` prefers among the spec's three
/// (`application/json`, `text/json`, `text/plain`); the body is the same JSON in all three.
/// A missing or unmatched `Accept` gets `application/json`, which every client of this API reads.
pub fn preferred_media_type(headers: &HeaderMap) -> &'static str {
    const APPLICATION_JSON: &str = "application/json";
    const TEXT_JSON: &str = "text/json; charset=utf-8";
    const TEXT_PLAIN: &str = "text/plain; charset=utf-8";
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return APPLICATION_JSON;
    };
    let mut ranges: Vec<(f32, usize, &'static str)> = accept
        .split(',')
        .enumerate()
        .filter_map(|(i, range)| {
            let mut parts = range.split(';');
            let media = parts.next()?.trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            let ours = match media.as_str() {
                "application/json" | "application/*" | "*/*" => APPLICATION_JSON,
                "text/json" => TEXT_JSON,
                "text/plain" | "text/*" => TEXT_PLAIN,
                _ => return None,
            };
            (q > 0.0).then_some((q, i, ours))
        })
        .collect();
    // Highest quality first; among equals, the client's order.
    ranges.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranges.first().map_or(APPLICATION_JSON, |r| r.2)
}

/// Middleware: relabels every JSON response (envelopes, errors included) with the media type the
/// client asked for.
pub async fn negotiate(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let chosen = preferred_media_type(req.headers());
    let mut res = next.call(req).await?;
    let is_json_response = res
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if is_json_response && !chosen.starts_with("application/json") {
        res.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(chosen));
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn each_of_the_three_media_types_is_chosen_when_asked_for() {
        assert_eq!(
            preferred_media_type(&accept("application/json")),
            "application/json"
        );
        assert_eq!(
            preferred_media_type(&accept("text/json")),
            "text/json; charset=utf-8"
        );
        assert_eq!(
            preferred_media_type(&accept("text/plain")),
            "text/plain; charset=utf-8"
        );
    }

    #[test]
    fn quality_values_decide_and_ties_keep_the_clients_order() {
        assert_eq!(
            preferred_media_type(&accept("application/json;q=0.5, text/plain;q=0.9")),
            "text/plain; charset=utf-8"
        );
        assert_eq!(
            preferred_media_type(&accept("text/json, application/json")),
            "text/json; charset=utf-8"
        );
        assert_eq!(
            preferred_media_type(&accept("text/plain;q=0, */*")),
            "application/json"
        );
    }

    #[test]
    fn missing_or_foreign_accept_gets_application_json() {
        assert_eq!(preferred_media_type(&HeaderMap::new()), "application/json");
        assert_eq!(
            preferred_media_type(&accept("text/html")),
            "application/json"
        );
    }

    #[test]
    fn json_content_types_include_structured_suffixes_and_text_json_only() {
        for ok in [
            "application/json",
            "text/json",
            "application/merge-patch+json",
            "application/vnd.api+json; charset=utf-8",
        ] {
            assert!(is_json(&ok.parse().unwrap()), "{ok}");
        }
        for bad in [
            "text/plain",
            "application/xml",
            "multipart/form-data",
            "text/json+xml",
        ] {
            assert!(!is_json(&bad.parse().unwrap()), "{bad}");
        }
    }

    #[test]
    fn nesting_is_counted_outside_strings_only() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(!json_too_deep(nested(32).as_bytes(), 32));
        assert!(json_too_deep(nested(33).as_bytes(), 32));
        // object > object > array > object: depth 4
        assert!(!json_too_deep(br#"{"a":{"b":[1,{"c":2}]}}"#, 4));
        assert!(json_too_deep(br#"{"a":{"b":[1,{"c":2}]}}"#, 3));
        // brackets in strings, escaped quotes included, are text
        let text = format!(r#"{{"a":"{}\"{}"}}"#, "[".repeat(100), "{".repeat(100));
        assert!(!json_too_deep(text.as_bytes(), 1));
        // an escaped backslash ends before the quote: the string closes there
        assert!(json_too_deep(br#"{"a":"\\", "b":[[1]]}"#, 2));
        // unbalanced closers never underflow
        assert!(!json_too_deep(b"]]]]}}}[", 1));
    }

    #[test]
    fn serde_messages_never_echo_the_submitted_value() {
        let e = serde_json::from_str::<std::collections::HashMap<String, String>>(
            r#"{"cpfTitular": 52998224725}"#,
        )
        .unwrap_err();
        let described = describe_serde_error(&e);
        assert!(!described.contains("52998224725"), "{described}");
        assert!(described.contains("valor de tipo inválido"));
    }
}
