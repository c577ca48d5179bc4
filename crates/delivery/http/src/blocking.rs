//! The one blocking hop of a request: diesel and ureq block, so the whole service call (key
//! lookup, rate limit and pool checkout included) runs on actix's blocking pool, never on an
//! executor thread.

use std::sync::Arc;

use actix_web::web;
use application::Services;
use domain::Company;

use crate::api_key::ApiKeyHeader;
use crate::error::ApiError;
use crate::rate_limit;

/// Authenticates `key`, counts the request against the company's rate limit (429 over it), and
/// runs `f` for the company, in one blocking hop.
pub async fn as_company<T, F>(
    services: &web::Data<Services>,
    key: ApiKeyHeader,
    f: F,
) -> Result<T, ApiError>
where
    F: FnOnce(&Services, &Company) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    let services: Arc<Services> = services.clone().into_inner();
    let limiter = rate_limit::current_limiter();
    let span = tracing::Span::current();
    let (result, status, company) = web::block(move || {
        let _entered = span.enter();
        let company = services.auth.authenticate(Some(key.as_str()))?;
        // Every line of the rest of the request carries the company.
        span.record("company_id", tracing::field::display(company.id));
        let status = match &limiter {
            Some(limiter) => Some(limiter.check(company.id).map_err(ApiError::RateLimited)?),
            None => None,
        };
        Ok::<_, ApiError>((f(&services, &company), status, company.id))
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("blocking task failed: {e}")))??;
    crate::request_id::record_company(company);
    if let Some(status) = status {
        rate_limit::record(status);
    }
    result
}
