//! The one blocking hop of a request: diesel and ureq block, so the service call (key lookup,
//! rate limit and pool checkout included) runs on actix's blocking pool, never on an executor
//! thread. The hop runs inside the [`RequestScope`] the binary gave (the database adapter's:
//! however many repositories the call uses, the request checks out one pooled connection, given
//! back while it waits on the PGCC); this layer knows nothing of connections.
//!
//! A request whose answer is in memory (key and answer cached) skips the hop: see
//! [`as_company_or_cached`].

use std::sync::Arc;

use actix_web::web;
use application::{Caller, Services};
use domain::{Company, CompanyId};

use crate::api_key::ApiKeyHeader;
use crate::database_gate::while_database_answers;
use crate::error::ApiError;
use crate::rate_limit::{self, CompanyRateLimiter, RateLimitStatus};
use crate::state::ApiState;

/// What wraps each request's blocking work, on the thread that runs it. The binary gives the
/// database adapter's connection scope; tests of the HTTP layer need none ([`Unscoped`]).
pub trait RequestScope: Send + Sync {
    /// Runs `work` once, inside the scope, on the calling thread.
    fn run(&self, work: &mut dyn FnMut());
}

/// No scope: the work just runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unscoped;

impl RequestScope for Unscoped {
    fn run(&self, work: &mut dyn FnMut()) {
        work()
    }
}

/// `work` inside `scope`, with its result.
fn scoped<T>(scope: &dyn RequestScope, work: impl FnOnce() -> T) -> T {
    let mut work = Some(work);
    let mut result = None;
    scope.run(&mut || {
        if let Some(work) = work.take() {
            result = Some(work());
        }
    });
    result.expect("a request scope runs the work it is given")
}

/// Who a request runs for: the authenticated key (its id, company and scopes) and the template
/// of the route it called. What [`crate::access_log::record_read`] records.
#[derive(Debug, Clone)]
pub struct Call {
    pub caller: Caller,
    /// The route's template as registered (never the concrete path).
    pub route: &'static str,
}

impl Call {
    pub fn company(&self) -> &Company {
        &self.caller.company
    }
}

/// Authenticates `key`, checks that its scopes grant the route (403 otherwise, before anything
/// else), counts the request against the company's rate limit (429 over it), and runs `f` for
/// the company, in one blocking hop.
pub async fn as_company<T, F>(
    state: &web::Data<ApiState>,
    key: ApiKeyHeader,
    f: F,
) -> Result<T, ApiError>
where
    F: FnOnce(&Services, &Company) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    as_company_or_cached(state, key, |_, _| None, f).await
}

/// [`as_company`] for a handler that needs the key itself (its id, to record a read of
/// personal data: [`crate::access_log::record_read`]).
pub async fn as_caller<T, F>(
    state: &web::Data<ApiState>,
    key: ApiKeyHeader,
    f: F,
) -> Result<T, ApiError>
where
    F: FnOnce(&Services, &Call) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    run_as_caller(state, key, 1, |_, _| None, f).await
}

/// [`as_company`] for a request that counts as `weight` requests against the company's rate
/// limit (a batch: see `routes::consent_check::check_batch`).
pub async fn as_company_weighing<T, F>(
    state: &web::Data<ApiState>,
    key: ApiKeyHeader,
    weight: u32,
    f: F,
) -> Result<T, ApiError>
where
    F: FnOnce(&Services, &Company) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    run_as_caller(
        state,
        key,
        weight,
        |_, _| None,
        move |s, call| f(s, call.company()),
    )
    .await
}

/// [`as_company`], except that when the key resolves from the cache and `cached` answers from
/// memory, the answer is given on the executor thread, with no blocking hop and no database.
/// `cached` must not block.
pub async fn as_company_or_cached<T, C, F>(
    state: &web::Data<ApiState>,
    key: ApiKeyHeader,
    cached: C,
    f: F,
) -> Result<T, ApiError>
where
    C: FnOnce(&Services, &Company) -> Option<T>,
    F: FnOnce(&Services, &Company) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    run_as_caller(
        state,
        key,
        1,
        move |s, call| cached(s, call.company()),
        move |s, call| f(s, call.company()),
    )
    .await
}

async fn run_as_caller<T, C, F>(
    state: &web::Data<ApiState>,
    mut key: ApiKeyHeader,
    weight: u32,
    cached: C,
    f: F,
) -> Result<T, ApiError>
where
    C: FnOnce(&Services, &Call) -> Option<T>,
    F: FnOnce(&Services, &Call) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    // task-locals (the limiter, the request's company) are reachable here, not on the blocking
    // thread
    let limiter = rate_limit::current_limiter();
    let services = &state.services;
    let route = key.route();
    // resolved from memory by the extractor, or now
    let from_memory = key
        .take_cached()
        .or_else(|| services.auth.authenticate_cached(Some(key.as_str())));
    if let Some(caller) = from_memory {
        crate::request_id::record_company(caller.company.id);
        // before anything happens: a route outside the key's scopes changes nothing
        key.permits(caller.scopes)?;
        let status = check_rate(limiter.as_deref(), caller.quota_of, weight)?;
        if let Some(status) = status {
            rate_limit::record(status);
        }
        let call = Call { caller, route };
        if let Some(answer) = cached(services, &call) {
            return Ok(answer);
        }
        return in_blocking_hop(state, move |s| f(s, &call)).await;
    }
    let state: Arc<ApiState> = state.clone().into_inner();
    let span = tracing::Span::current();
    let hop = web::block(move || {
        let _entered = span.enter();
        scoped(&*state.request_scope, || {
            let services = &state.services;
            let caller = services.auth.authenticate(Some(key.as_str()))?;
            // Every line of the rest of the request carries the company.
            span.record("company_id", tracing::field::display(caller.company.id));
            // before anything happens: a route outside the key's scopes changes nothing
            key.permits(caller.scopes)?;
            let status = check_rate(limiter.as_deref(), caller.quota_of, weight)?;
            let company = caller.company.id;
            let call = Call { caller, route };
            Ok::<_, ApiError>((f(services, &call), status, company))
        })
    });
    let (result, status, company) =
        while_database_answers(async { hop.await.map_err(blocking_failed)? }).await?;
    crate::request_id::record_company(company);
    if let Some(status) = status {
        rate_limit::record(status);
    }
    result
}

/// Runs `work` on the blocking pool, inside the request scope and the request's span.
pub async fn in_blocking_hop<T, W>(state: &web::Data<ApiState>, work: W) -> Result<T, ApiError>
where
    W: FnOnce(&Services) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    let state: Arc<ApiState> = state.clone().into_inner();
    let span = tracing::Span::current();
    let hop = web::block(move || {
        let _entered = span.enter();
        scoped(&*state.request_scope, || work(&state.services))
    });
    while_database_answers(async { hop.await.map_err(blocking_failed)? }).await
}

fn blocking_failed(e: actix_web::error::BlockingError) -> ApiError {
    ApiError::Internal(anyhow::anyhow!("blocking task failed: {e}"))
}

/// The rate-limit verdict of the company whose quota the call takes (a sandbox's calls take its
/// real company's; `None` when limits are off).
pub fn check_rate(
    limiter: Option<&CompanyRateLimiter>,
    company: CompanyId,
    weight: u32,
) -> Result<Option<RateLimitStatus>, ApiError> {
    match limiter {
        Some(limiter) => Ok(Some(
            limiter
                .check_n(company, weight)
                .map_err(ApiError::RateLimited)?,
        )),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    thread_local! {
        static INSIDE: Cell<bool> = const { Cell::new(false) };
    }

    /// Marks the thread as inside while the work runs.
    struct Marking;

    impl RequestScope for Marking {
        fn run(&self, work: &mut dyn FnMut()) {
            INSIDE.with(|i| i.set(true));
            work();
            INSIDE.with(|i| i.set(false));
        }
    }

    #[test]
    fn the_work_runs_once_inside_the_scope_and_its_result_comes_back() {
        let runs = Cell::new(0);
        let answer = scoped(&Marking, || {
            runs.set(runs.get() + 1);
            INSIDE.with(Cell::get)
        });
        assert!(answer, "the work ran inside the scope");
        assert_eq!(runs.get(), 1);
        assert!(!INSIDE.with(Cell::get), "and the scope closed after it");
        assert_eq!(scoped(&Unscoped, || 42), 42);
    }
}
