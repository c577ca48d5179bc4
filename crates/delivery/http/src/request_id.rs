//! The outermost middleware: a request id per request (the client's `X-Request-Id` when it is
//! 1 to 128 visible ASCII characters, else a new UUID), echoed in the response's `X-Request-Id`;
//! a tracing span `request` carrying `request_id`, `method`, `route` and, once the key resolved,
//! `company_id`; one access log line per request (method, route template, status, duration: never
//! the raw path, whose segments may be personal data, nor a header nor a query, which may carry a
//! CPF); and the HTTP metrics. With telemetry on, the span continues the trace of the request's
//! `traceparent` (a malformed one starts a new trace) and is exported with the response's status.

use std::cell::Cell;
use std::sync::Arc;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::Error;
use domain::CompanyId;
use tracing::Instrument;

use crate::metrics::Metrics;

pub const REQUEST_ID_HEADER: &str = "x-request-id";
/// Longest client request id kept as is.
pub const MAX_REQUEST_ID_LEN: usize = 128;
/// The route logged for a request no route matched: its raw path could be anything a client
/// typed, a CPF included, so it is never written.
pub const UNMATCHED_ROUTE_LOG: &str = "<unmatched>";
/// The metrics label of the same (documented in docs/decisions.md, "Operability").
pub const UNMATCHED_ROUTE_LABEL: &str = "unmatched";

tokio::task_local! {
    static COMPANY: Cell<Option<CompanyId>>;
}

/// The client's id when usable: 1 to 128 visible ASCII characters (no space, no control).
pub fn sanitize(given: Option<&[u8]>) -> Option<String> {
    let given = given?;
    let usable = !given.is_empty()
        && given.len() <= MAX_REQUEST_ID_LEN
        && given.iter().all(|b| (0x21..=0x7e).contains(b));
    usable.then(|| String::from_utf8_lossy(given).into_owned())
}

/// The company the request acts for, once its key resolved (called by `blocking::as_company`):
/// recorded on the request's span and kept for the request's metrics.
pub fn record_company(company: CompanyId) {
    tracing::Span::current().record("company_id", tracing::field::display(company));
    let _ = COMPANY.try_with(|c| c.set(Some(company)));
}

/// The company the request's key resolved to, once it did (`None` before, or without a key).
pub(crate) fn resolved_company() -> Option<CompanyId> {
    COMPANY.try_with(Cell::get).ok().flatten()
}

/// The middleware (`from_fn`), with the process's metrics.
pub async fn observe(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
    metrics: Arc<Metrics>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let started = Instant::now();
    let request_id = sanitize(
        req.headers()
            .get(REQUEST_ID_HEADER)
            .map(HeaderValue::as_bytes),
    )
    .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let method = known_method(req.method().as_str());
    let span = tracing::info_span!(
        "request",
        request_id = %request_id,
        method,
        route = tracing::field::Empty,
        company_id = tracing::field::Empty,
    );
    telemetry::continue_from(
        &span,
        req.headers()
            .get(telemetry::TRACEPARENT)
            .and_then(|value| value.to_str().ok()),
    );
    let result = COMPANY
        .scope(Cell::new(None), async {
            let result = next.call(req).await;
            (result, COMPANY.with(Cell::get))
        })
        .instrument(span.clone())
        .await;
    let (result, company) = result;
    let mut response = result?;
    let route = response.request().match_pattern();
    span.record("route", route.as_deref().unwrap_or(UNMATCHED_ROUTE_LOG));
    let status = response.status().as_u16();
    telemetry::set_attribute(&span, "http.response.status_code", i64::from(status));
    let elapsed = started.elapsed();
    tracing::info!(
        parent: &span,
        status,
        duration_ms = elapsed.as_secs_f64() * 1000.0,
        "request"
    );
    let company = company.map(|c| c.to_string());
    let label = route.as_deref().unwrap_or(UNMATCHED_ROUTE_LABEL);
    metrics.http_request(label, method, status, company.as_deref(), elapsed);
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response
            .headers_mut()
            .insert(HeaderName::from_static(REQUEST_ID_HEADER), value);
    }
    Ok(response)
}

/// The method as a label: one of the standard ones, else `OTHER` (bounded cardinality).
fn known_method(method: &str) -> &'static str {
    match method {
        "GET" => "GET",
        "POST" => "POST",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "DELETE" => "DELETE",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        _ => "OTHER",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_visible_id_of_at_most_128_characters_is_kept_anything_else_is_replaced() {
        assert_eq!(sanitize(Some(b"abc-123")).as_deref(), Some("abc-123"));
        assert_eq!(
            sanitize(Some("x".repeat(128).as_bytes())).map(|s| s.len()),
            Some(128)
        );
        assert_eq!(sanitize(Some("x".repeat(129).as_bytes())), None);
        assert_eq!(sanitize(Some(b"")), None);
        assert_eq!(sanitize(Some(b"has space")), None);
        assert_eq!(sanitize(Some(b"tab\there")), None);
        assert_eq!(sanitize(Some("acentuação".as_bytes())), None);
        assert_eq!(sanitize(None), None);
    }

    #[test]
    fn unusual_methods_share_one_label() {
        assert_eq!(known_method("GET"), "GET");
        assert_eq!(known_method("PROPFIND"), "OTHER");
    }
}
