//! The one blocking hop of a request: diesel and ureq block, so the whole service call (key
//! lookup and pool checkout included) runs on actix's blocking pool, never on an executor thread.

use std::sync::Arc;

use actix_web::web;
use application::Services;
use domain::Company;

use crate::api_key::ApiKeyHeader;
use crate::error::ApiError;

/// Authenticates `key` and runs `f` for the company it resolves to, in one blocking hop.
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
    let span = tracing::Span::current();
    web::block(move || {
        let _entered = span.enter();
        let company = services.auth.authenticate(Some(key.as_str()))?;
        f(&services, &company)
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("blocking task failed: {e}")))?
}
