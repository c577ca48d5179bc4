//! What every handler shares: the application's services, and what the HTTP layer owns itself.

use std::sync::Arc;

use application::cache::CacheStats;
use application::Services;
use ports::{Clock, IdempotencyRepository};

use crate::blocking::{RequestScope, Unscoped};
use crate::console::{ConsoleSettings, Sessions};
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
    /// The console's sessions, one store for the process (see [`crate::console::session`]).
    pub console: Arc<Sessions>,
    /// The console's exports under way, per company (see `console::export`).
    pub(crate) exports: Arc<crate::console::ExportsUnderWay>,
    /// The rows the console's chart last read per company (see `console::chart`).
    pub(crate) chart_rows: Arc<crate::console::ChartRows>,
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
            console: Arc::new(Sessions::default()),
            exports: Arc::default(),
            chart_rows: Arc::default(),
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

    /// The console's sessions behave as `settings` say and are kept in `store`.
    pub fn with_console(
        mut self,
        settings: ConsoleSettings,
        store: Arc<dyn ports::ConsoleSessionStore>,
    ) -> Self {
        self.console = Arc::new(Sessions::new(settings, store));
        self
    }

    /// Each in-process cache by name, with its counters (for `/metrics`).
    pub fn cache_stats(&self) -> Vec<(&'static str, CacheStats)> {
        let mut stats = self.services.cache_stats().to_vec();
        stats.push(("use_case_lists", self.use_case_lists.stats()));
        stats
    }
}
