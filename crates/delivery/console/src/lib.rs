//! `/console` (issue 26; docs/console.md): server-rendered pages in Portuguese for the people who
//! are not developers, signed in with an API key exchanged for a session. Outside `/api`: no
//! `Api-Key` header, no envelope; each page checks the session's key and its scopes itself
//! (`visit::Visit::signed_in`), as the API's `grants` do for `/api`, and runs in one blocking
//! hop like the API's handlers.
//!
//! A crate of its own (issue 38): it depends on the HTTP crate's shared pieces (the state, the
//! error mapping, the blocking hop, the rate limiter, the access log, the DTOs) and is mounted
//! into its app by the binary ([`Console::mount`], `delivery_http::HttpApp::mounting`); the
//! HTTP crate knows nothing of it. Pages are `maud` templates: compile-time, and every value put
//! in them is escaped unless wrapped in `PreEscaped` (which nothing here does).

mod accesses;
mod chart;
mod evidence_bundle;
mod export;
mod health;
mod home;
mod human;
mod id_token;
mod idp;
mod import_form;
mod imports_page;
mod layout;
mod oidc_sign_in;
mod oidc_sign_out;
mod operator;
mod receipt;
mod refusal;
mod request;
mod routes;
pub mod session;
mod sign_in;
mod subject_page;
mod subject_searches;
mod subjects;
mod url_forms;
mod url_page;
mod visit;

use std::sync::Arc;

use actix_web::web;
use ports::ConsoleSessionStore;

pub use oidc_sign_in::OidcSetup;

pub use session::{ConsoleSettings, Sessions};

/// What the console's pages share, besides the API's state: one of each for the process.
#[derive(Clone)]
pub struct Console {
    /// The sessions (see [`session`]).
    sessions: Arc<Sessions>,
    /// The rows the chart last read per company (see `chart`).
    chart_rows: Arc<chart::ChartRows>,
    /// Sign-in at the companies' identity providers (issue 38); `None`: API keys only.
    oidc: Option<Arc<oidc_sign_in::Oidc>>,
    /// The rows the home page's figures last read per company (charged as the chart's).
    home_rows: Arc<chart::ChartRows>,
    /// The home page's figures per company, kept a minute (see `home`).
    summaries: Arc<home::Summaries>,
    /// The rows a URL's health figures last read per company (charged as the chart's).
    health_rows: Arc<chart::ChartRows>,
    /// The CPF searches' tokens (see `subject_searches`).
    searches: Arc<subject_searches::SubjectSearches>,
    /// The rows the subject's page or bundle last read per company (charged as the chart's).
    subject_rows: Arc<chart::ChartRows>,
    /// The witnesses' verifier keys (`auditoria.witnesses`), put in the evidence bundle.
    witness_keys: Arc<Vec<String>>,
}

impl Console {
    /// Sessions that behave as `settings` say, kept in `store`.
    pub fn new(settings: ConsoleSettings, store: Arc<dyn ConsoleSessionStore>) -> Self {
        Console {
            sessions: Arc::new(Sessions::new(settings, store)),
            chart_rows: Arc::default(),
            oidc: None,
            home_rows: Arc::default(),
            summaries: Arc::default(),
            health_rows: Arc::default(),
            searches: Arc::default(),
            subject_rows: Arc::default(),
            witness_keys: Arc::default(),
        }
    }

    /// The witnesses' verifier keys (C2SP vkeys), which the evidence bundle carries so that its
    /// checkpoint's cosignatures can be checked offline.
    pub fn with_witness_keys(mut self, vkeys: Vec<String>) -> Self {
        self.witness_keys = Arc::new(vkeys);
        self
    }

    /// The CPF searches kept in `store` (PostgreSQL in the service: every replica finds them)
    /// rather than in this process's memory.
    pub fn with_search_store(mut self, store: Arc<dyn ports::ConsoleSearchStore>) -> Self {
        self.searches = Arc::new(subject_searches::SubjectSearches::new(store));
        self
    }

    /// People sign in at their companies' identity providers too (`consent-api company oidc`).
    pub fn with_oidc(mut self, setup: OidcSetup) -> Self {
        self.oidc = Some(Arc::new(oidc_sign_in::Oidc {
            setup,
            client: idp::IdpClient::default(),
        }));
        self
    }

    /// The console's routes and state, for `delivery_http::HttpApp::mounting`.
    pub fn mount(self) -> delivery_http::Mount {
        let console = web::Data::new(self);
        Arc::new(move |cfg: &mut web::ServiceConfig| {
            cfg.app_data(console.clone()).configure(routes::configure);
        })
    }
}
