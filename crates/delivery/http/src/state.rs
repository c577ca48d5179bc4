//! What every handler shares: the application's services, and what the HTTP layer owns itself.

use std::sync::Arc;

use application::cache::CacheStats;
use application::Services;
use ports::{Clock, IdempotencyRepository};

use crate::blocking::{RequestScope, Unscoped};
use crate::exports::ExportsUnderWay;
use crate::idempotency::Idempotency;
use crate::use_case_lists::UseCaseLists;

/// The state of the app (`web::Data<ApiState>`), built once by the binary (or a test).
#[derive(Clone)]
pub struct ApiState {
    pub services: Services,
    /// Runs requests under their `Idempotency-Key` (see [`crate::idempotency`]).
    pub idempotency: Idempotency,
    /// Each company's `GET /api/casos-de-uso` answer, rendered (see [`crate::use_case_lists`]).
    pub use_case_lists: UseCaseLists,
    /// Wraps each request's blocking hop (see [`crate::blocking`]).
    pub request_scope: Arc<dyn RequestScope>,
    /// The exports under way per company, the console's and the API's (see [`crate::exports`]).
    pub exports: Arc<ExportsUnderWay>,
}

impl ApiState {
    /// The services, idempotency keys kept in `idempotency_keys`; no rendered list kept, no
    /// request scope.
    pub fn new(
        services: Services,
        idempotency_keys: Arc<dyn IdempotencyRepository>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            use_case_lists: UseCaseLists::new(services.change_tracker.clone(), 0),
            services,
            idempotency: Idempotency::new(idempotency_keys, clock),
            request_scope: Arc::new(Unscoped),
            exports: Arc::default(),
        }
    }

    /// Keeps up to `capacity_bytes` of rendered use-case lists (while the services' change
    /// tracker trusts them).
    pub fn caching_use_case_lists(mut self, capacity_bytes: u64) -> Self {
        self.use_case_lists =
            UseCaseLists::new(self.services.change_tracker.clone(), capacity_bytes);
        self
    }

    /// Each request's blocking hop runs inside `scope`.
    pub fn with_request_scope(mut self, scope: Arc<dyn RequestScope>) -> Self {
        self.request_scope = scope;
        self
    }

    /// Each in-process cache by name, with its counters (for `/metrics`).
    pub fn cache_stats(&self) -> Vec<(&'static str, CacheStats)> {
        let mut stats = self.services.cache_stats().to_vec();
        stats.push(("use_case_lists", self.use_case_lists.stats()));
        stats
    }
}
