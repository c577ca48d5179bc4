//! HTTP delivery over actix-web: routes, extractors, envelope responses, content negotiation and
//! the OpenAPI document. `main` and the tests build the very same app with [`HttpApp`]. Pages
//! served beside the API (the console, crate `consent-console`) are mounted into it with
//! [`HttpApp::mounting`]: they share its middleware, state, error mapping and blocking hop, and
//! this crate knows nothing of them.

pub mod access_log;
pub mod api_key;
pub mod blocking;
mod bounded_page;
pub mod conditional;
pub mod database_gate;
pub mod dto;
pub mod edge;
pub mod error;
pub mod exports;
pub mod failed_auth;
pub mod idempotency;
pub mod import_file;
pub mod import_upload;
pub mod media;
pub mod metrics;
pub mod optional_json;
pub mod query;
pub mod rate_limit;
pub mod request_id;
pub mod routes;
pub mod state;
pub mod use_case_lists;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpServer};
use application::Operations;

pub use blocking::{RequestScope, Unscoped};
pub use error::ApiError;
pub use failed_auth::FailedAuthSettings;
pub use rate_limit::{LiveReplicas, RateLimitSettings};
pub use routes::openapi::{document_json as openapi_json, ApiDoc, DocsServers};
pub use state::ApiState;

/// HTTP settings the delivery layer needs.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Largest accepted request body, in bytes (413 above it).
    pub body_limit_bytes: usize,
    /// From a request's head to the last byte of its body (408 past it).
    pub body_timeout: Duration,
    /// An imported file's bounds (`importacao.max_bytes`, `importacao.upload_timeout_seconds`).
    pub upload_limit_bytes: usize,
    pub upload_timeout: Duration,
    /// From a connection's start (or its previous request) to the end of a request's headers;
    /// past it actix answers 408 and closes the connection.
    pub header_timeout: Duration,
    /// Worker threads of the HTTP server (0: one per core).
    pub workers: usize,
    /// Deepest nesting of arrays and objects accepted in a JSON body (400 above it).
    pub json_max_depth: usize,
    /// After a stop, how long in-flight requests may take before their connections are dropped.
    pub shutdown_grace_seconds: u64,
    /// Requests per company (token bucket); `per_second = 0` turns it off.
    pub rate_limit: RateLimitSettings,
    /// How many replicas share the rate limit (kept current by the app's heartbeat; 1 when
    /// nothing updates it).
    pub replicas: LiveReplicas,
    /// Failed authentications per client address, and the proxies whose `X-Forwarded-For` is
    /// believed.
    pub failed_auth: FailedAuthSettings,
    /// Base URLs listed as `servers` in `/openapi.json` (and so in `/docs`).
    pub docs: DocsServers,
    /// While no readiness probe has had an answer from the database for this long, `/api`
    /// requests are answered 503 at once (see [`database_gate`]).
    pub database_unanswered_after: std::time::Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            body_limit_bytes: 64 * 1024,
            body_timeout: Duration::from_secs(10),
            upload_limit_bytes: 2 * 1024 * 1024 * 1024,
            upload_timeout: Duration::from_secs(3600),
            header_timeout: Duration::from_secs(5),
            workers: 0,
            json_max_depth: 32,
            shutdown_grace_seconds: 30,
            rate_limit: RateLimitSettings::default(),
            replicas: LiveReplicas::default(),
            failed_auth: FailedAuthSettings::default(),
            docs: DocsServers::default(),
            database_unanswered_after: std::time::Duration::from_secs(2),
        }
    }
}

/// See `client_disconnect_timeout` in [`HttpApp::serve`]: actix's default, stated here because
/// the body and header timeouts rely on connections being dropped soon after.
const CLIENT_DISCONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// What the operator's endpoints (`/health/*`, `/metrics`) need.
#[derive(Clone)]
pub struct Operability {
    /// Readiness probes, pool and backlog gauges.
    pub operations: Arc<Operations>,
    /// The process's metrics (also fed by the PGCC decorator and the background jobs).
    pub metrics: Arc<metrics::Metrics>,
    /// With a token, `/metrics` answers 401 without `Authorization: Bearer <token>`.
    pub metrics_token: Option<String>,
}

impl Operability {
    /// No probe (always ready), no gauge, fresh metrics, `/metrics` open: for tests of the API.
    pub fn bare() -> Self {
        Operability {
            operations: Arc::new(Operations::new(
                Vec::new(),
                None,
                Arc::new(ports::SystemClock),
            )),
            metrics: Arc::new(metrics::Metrics::new()),
            metrics_token: None,
        }
    }
}

/// Routes served beside the API's, with its middleware and shared configuration (the console's
/// pages): registered on every worker's app, before the catch-all 404.
pub type Mount = Arc<dyn Fn(&mut web::ServiceConfig) + Send + Sync>;

/// The one app: `main` serves it ([`HttpApp::serve`]) and the tests drive it
/// ([`HttpApp::app`] in `actix_web::test::init_service`), with the same middleware, routes and
/// shared configuration. What the HTTP worker threads share (the rate limiter, the failed
/// authentications' limiter, the rendered OpenAPI document) is built here, once.
#[derive(Clone)]
pub struct HttpApp {
    state: Arc<ApiState>,
    operability: Operability,
    settings: HttpSettings,
    limiter: Option<Arc<rate_limit::CompanyRateLimiter>>,
    failed_auth: Option<Arc<failed_auth::FailedAuthLimiter>>,
    openapi: web::Data<routes::openapi::ServedDocument>,
    mounts: Vec<Mount>,
}

impl HttpApp {
    pub fn new(state: Arc<ApiState>, operability: Operability, settings: HttpSettings) -> Self {
        // One limiter for the process, shared by every worker thread.
        let limiter = rate_limit::CompanyRateLimiter::new(settings.rate_limit)
            .map(|limiter| Arc::new(limiter.shared_by(settings.replicas.clone())));
        let failed_auth = failed_auth::FailedAuthLimiter::new(&settings.failed_auth).map(Arc::new);
        // Rendered here, once for the process, not per worker nor per request.
        let openapi = web::Data::new(routes::openapi::ServedDocument::new(&settings.docs));
        HttpApp {
            state,
            operability,
            settings,
            limiter,
            failed_auth,
            openapi,
            mounts: Vec::new(),
        }
    }

    /// Serves `mount`'s routes too (see [`Mount`]).
    pub fn mounting(mut self, mount: Mount) -> Self {
        self.mounts.push(mount);
        self
    }

    /// The app of one HTTP worker thread (or of a test). Middleware, outermost first: request
    /// id, span, access line and HTTP metrics; media-type negotiation; the body's bounds; rate
    /// limit bookkeeping; the database gate; the failed authentications' limit. actix-web runs
    /// the last `.wrap` first, so they are listed bottom-up.
    pub fn app(
        &self,
    ) -> App<
        impl ServiceFactory<
            ServiceRequest,
            Config = (),
            Response = ServiceResponse<impl MessageBody>,
            Error = actix_web::Error,
            InitError = (),
        >,
    > {
        let limiter = self.limiter.clone();
        let failed_auth = self.failed_auth.clone();
        let database_unanswered_after = self.settings.database_unanswered_after;
        let body_bounds = edge::BodyBounds {
            limit: self.settings.body_limit_bytes,
            timeout: self.settings.body_timeout,
            upload_limit: self.settings.upload_limit_bytes,
            upload_timeout: self.settings.upload_timeout,
            evidence_limit: usize::try_from(self.state.services.evidence_files.limits().max_bytes)
                .unwrap_or(usize::MAX),
        };
        let metrics = self.operability.metrics.clone();
        App::new()
            .wrap(from_fn(move |req, next| {
                failed_auth::guard(req, next, failed_auth.clone())
            }))
            .wrap(from_fn(move |req, next| {
                database_gate::gate(req, next, database_unanswered_after)
            }))
            .wrap(from_fn(move |req, next| {
                rate_limit::track(req, next, limiter.clone())
            }))
            // Inside `negotiate` (its refusals are relabelled like any answer), outside every
            // route and key check: an encoded body is refused before anything reads it.
            .wrap(from_fn(move |req, next| {
                edge::bound_body(req, next, body_bounds)
            }))
            .wrap(from_fn(media::negotiate))
            // Request id, span, access log (method, route, path: no query string, which may
            // carry a CPF; no header, e.g. the Api-Key) and HTTP metrics.
            .wrap(from_fn(move |req, next| {
                request_id::observe(req, next, metrics.clone())
            }))
            .configure(routes::health::configure(&self.operability))
            .configure(configure(
                self.state.clone(),
                &self.settings,
                self.openapi.clone(),
                self.mounts.clone(),
            ))
    }

    /// The HTTP server on an already bound listener (port 0 in tests). It installs no signal
    /// handler: the caller decides when to stop it (`Server::handle().stop(true)` finishes
    /// in-flight requests within `shutdown_grace_seconds`, accepting no new connection
    /// meanwhile).
    pub fn serve(self, listener: TcpListener) -> std::io::Result<Server> {
        let settings = self.settings.clone();
        let mut server = HttpServer::new(move || self.app());
        if settings.workers > 0 {
            server = server.workers(settings.workers);
        }
        server = server
            .disable_signals()
            .shutdown_timeout(settings.shutdown_grace_seconds)
            // Slow or stalled request heads are answered 408 and closed (slowloris).
            .client_request_timeout(settings.header_timeout)
            // How long a connection closing after an early answer (a refused or timed-out body
            // still arriving) lingers so the client can finish sending and read the answer; then
            // it is dropped.
            .client_disconnect_timeout(CLIENT_DISCONNECT_TIMEOUT);
        Ok(server.listen(listener)?.run())
    }
}

/// The app's routes and shared configuration (no middleware: that is [`HttpApp::app`]'s).
fn configure(
    state: Arc<ApiState>,
    settings: &HttpSettings,
    openapi: web::Data<routes::openapi::ServedDocument>,
    mounts: Vec<Mount>,
) -> impl FnOnce(&mut web::ServiceConfig) {
    let limit = settings.body_limit_bytes;
    let max_depth = settings.json_max_depth;
    move |cfg: &mut web::ServiceConfig| {
        cfg.app_data(web::Data::from(state))
            .app_data(media::json_config(limit))
            .app_data(web::Data::new(media::JsonLimits {
                max_depth,
                body_limit: limit,
            }))
            .app_data(web::PayloadConfig::new(limit))
            .app_data(openapi)
            .configure(routes::configure);
        for mount in &mounts {
            mount(cfg);
        }
        cfg.default_service(web::to(routes::not_found));
    }
}
