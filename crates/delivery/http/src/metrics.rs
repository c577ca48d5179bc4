//! `GET /metrics`: the process's registry ([`metrics::Metrics`], built by the binary and
//! given to the server in [`crate::Operability`]) in the text exposition, behind its token.

use std::sync::Arc;

pub use ::metrics::Metrics;
use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use application::Operations;

use crate::error::ApiError;
use crate::state::ApiState;

/// Who may read `/metrics`: with a token, only `Authorization: Bearer <token>`.
#[derive(Clone)]
pub struct MetricsAccess {
    pub token: Option<String>,
}

/// Compares in time independent of where the first difference is.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether the request carries the token (always true without a token).
pub fn authorized(req: &HttpRequest, access: &MetricsAccess) -> bool {
    let Some(token) = &access.token else {
        return true;
    };
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .is_some_and(|given| same_secret(given.trim().as_bytes(), token.as_bytes()))
}

/// `GET /metrics`.
pub async fn handler(
    req: HttpRequest,
    metrics: web::Data<Metrics>,
    operations: web::Data<Operations>,
    access: web::Data<MetricsAccess>,
    state: Option<web::Data<ApiState>>,
) -> Result<HttpResponse, ApiError> {
    if !authorized(&req, &access) {
        return Ok(HttpResponse::Unauthorized()
            .insert_header((header::WWW_AUTHENTICATE, "Bearer realm=\"metrics\""))
            .content_type("text/plain; charset=utf-8")
            .body("metrics: a bearer token is required\n"));
    }
    let metrics: Arc<Metrics> = metrics.into_inner();
    let operations: Arc<Operations> = operations.into_inner();
    if let Some(state) = state {
        metrics.caches(&state.cache_stats(), state.services.caches_in_use());
    }
    // The backlog is a database query: off the executor threads.
    let text = web::block(move || metrics.gather(&operations))
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("blocking task failed: {e}")))?;
    Ok(HttpResponse::Ok()
        .content_type("application/openmetrics-text; version=1.0.0; charset=utf-8")
        .body(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_required_exactly_when_set() {
        let open = MetricsAccess { token: None };
        let closed = MetricsAccess {
            token: Some("s3cret".into()),
        };
        let bare = actix_web::test::TestRequest::default().to_http_request();
        let good = actix_web::test::TestRequest::default()
            .insert_header(("Authorization", "Bearer s3cret"))
            .to_http_request();
        let bad = actix_web::test::TestRequest::default()
            .insert_header(("Authorization", "Bearer s3cre"))
            .to_http_request();
        assert!(authorized(&bare, &open));
        assert!(!authorized(&bare, &closed));
        assert!(authorized(&good, &closed));
        assert!(!authorized(&bad, &closed));
    }
}
