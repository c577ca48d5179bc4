//! The PGCC gateway over HTTP (ureq 3): implements [`ports::PgccGateway`] with the contract of
//! `docs/pgcc.md`, its timeouts and its error mapping; and the sandbox's PGCC, simulated in process
//! with the simulator's rules ([`SandboxPgcc`]).
//!
//! Blocking: call it from a blocking pool (`web::block`), never on an async executor thread.

mod gateway;
mod http_errors;
mod probe;
mod resolver;
mod sandbox;
mod settings;
mod wire;

pub use gateway::{PgccHttpGateway, MAX_IDS_PER_STATUS_CALL};
pub use probe::PgccReachabilityProbe;
pub use sandbox::{
    SandboxPgcc, CPF_ACCEPTS_AFTER_5_S, CPF_ANSWERS_429, CPF_ANSWERS_503, CPF_REFUSES_AFTER_5_S,
    CPF_REVOKES_5_S_AFTER_ACTIVE, CPF_TIMES_OUT, SANDBOX_LINK_ID, SANDBOX_PGCC_ID_PREFIX,
    SANDBOX_RETRY_AFTER_SECONDS, SANDBOX_USE_CASES,
};
pub use settings::{PgccSettings, DEFAULT_MAX_RETRY_AFTER_SECONDS};
