//! The one blocking hop of a request: diesel and ureq block, so the service call (key lookup,
//! rate limit and pool checkout included) runs on actix's blocking pool, never on an executor
//! thread. Inside the hop a connection scope is open, so however many repositories the call
//! uses, the request checks out one pooled connection (given back while it waits on the PGCC).
//!
//! A request whose answer is in memory (key and answer cached) skips the hop: see
//! [`as_company_or_cached`].

use std::sync::Arc;

use actix_web::web;
use application::Services;
use domain::Company;

use crate::api_key::ApiKeyHeader;
use crate::database_gate::while_database_answers;
use crate::error::ApiError;
use crate::rate_limit::{self, CompanyRateLimiter, RateLimitStatus};

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
    as_company_or_cached(services, key, |_, _| None, f).await
}

/// [`as_company`] for a request that counts as `weight` requests against the company's rate
/// limit (a batch: see `routes::hash_consulta::check_batch`).
pub async fn as_company_weighing<T, F>(
    services: &web::Data<Services>,
    key: ApiKeyHeader,
    weight: u32,
    f: F,
) -> Result<T, ApiError>
where
    F: FnOnce(&Services, &Company) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    run_as_company(services, key, weight, |_, _| None, f).await
}

/// [`as_company`], except that when the key resolves from the cache and `cached` answers from
/// memory, the answer is given on the executor thread, with no blocking hop and no database.
/// `cached` must not block.
pub async fn as_company_or_cached<T, C, F>(
    services: &web::Data<Services>,
    key: ApiKeyHeader,
    cached: C,
    f: F,
) -> Result<T, ApiError>
where
    C: FnOnce(&Services, &Company) -> Option<T>,
    F: FnOnce(&Services, &Company) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    run_as_company(services, key, 1, cached, f).await
}

async fn run_as_company<T, C, F>(
    services: &web::Data<Services>,
    key: ApiKeyHeader,
    weight: u32,
    cached: C,
    f: F,
) -> Result<T, ApiError>
where
    C: FnOnce(&Services, &Company) -> Option<T>,
    F: FnOnce(&Services, &Company) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    // task-locals (the limiter, the request's company) are reachable here, not on the blocking
    // thread
    let limiter = rate_limit::current_limiter();
    if let Some(company) = services.auth.authenticate_cached(Some(key.as_str())) {
        crate::request_id::record_company(company.id);
        let status = check_rate(limiter.as_deref(), &company, weight)?;
        if let Some(status) = status {
            rate_limit::record(status);
        }
        if let Some(answer) = cached(services, &company) {
            return Ok(answer);
        }
        return in_blocking_hop(services, move |s| f(s, &company)).await;
    }
    let services_for_hop: Arc<Services> = services.clone().into_inner();
    let span = tracing::Span::current();
    let hop = web::block(move || {
        let _entered = span.enter();
        let _scope = services_for_hop.connection_scope.enter();
        let company = services_for_hop.auth.authenticate(Some(key.as_str()))?;
        // Every line of the rest of the request carries the company.
        span.record("company_id", tracing::field::display(company.id));
        let status = check_rate(limiter.as_deref(), &company, weight)?;
        Ok::<_, ApiError>((f(&services_for_hop, &company), status, company.id))
    });
    let (result, status, company) =
        while_database_answers(async { hop.await.map_err(blocking_failed)? }).await?;
    crate::request_id::record_company(company);
    if let Some(status) = status {
        rate_limit::record(status);
    }
    result
}

/// Runs `work` on the blocking pool, inside a connection scope and the request's span.
async fn in_blocking_hop<T, W>(services: &web::Data<Services>, work: W) -> Result<T, ApiError>
where
    W: FnOnce(&Services) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    let services: Arc<Services> = services.clone().into_inner();
    let span = tracing::Span::current();
    let hop = web::block(move || {
        let _entered = span.enter();
        let _scope = services.connection_scope.enter();
        work(&services)
    });
    while_database_answers(async { hop.await.map_err(blocking_failed)? }).await
}

fn blocking_failed(e: actix_web::error::BlockingError) -> ApiError {
    ApiError::Internal(anyhow::anyhow!("blocking task failed: {e}"))
}

/// The company's rate-limit verdict (`None` when limits are off).
fn check_rate(
    limiter: Option<&CompanyRateLimiter>,
    company: &Company,
    weight: u32,
) -> Result<Option<RateLimitStatus>, ApiError> {
    match limiter {
        Some(limiter) => Ok(Some(
            limiter
                .check_n(company.id, weight)
                .map_err(ApiError::RateLimited)?,
        )),
        None => Ok(None),
    }
}
