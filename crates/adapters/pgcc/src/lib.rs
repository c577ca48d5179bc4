//! The PGCC gateway over HTTP (ureq 3): implements [`ports::PgccGateway`] with the contract of
//! `docs/pgcc.md`, its timeouts and its error mapping.
//!
//! Blocking: call it from a blocking pool (`web::block`), never on an async executor thread.

mod gateway;
mod http_errors;
mod probe;
mod resolver;
mod settings;
mod wire;

pub use gateway::{PgccHttpGateway, MAX_IDS_PER_STATUS_CALL};
pub use probe::PgccReachabilityProbe;
pub use settings::{PgccSettings, DEFAULT_MAX_RETRY_AFTER_SECONDS};
