//! A simulator of the PGCC, the external consent platform, for tests, demos and benchmarks.
//!
//! It speaks the contract of `docs/pgcc.md` under `/pgcc/v1`, seeded from a JSON file, and
//! offers admin routes under `/_sim` to play the subject (accept, refuse, revoke), inspect what
//! it received (and how often each id was asked about through the batch status route, and the
//! `traceparent` headers that came with the calls), replace
//! the seed and inject faults (status, latency); `/_sim/webhooks` is a webhook receiver for
//! local demos.
//!
//! Its rules are a library too: the body's validation ([`NovaSolicitacao::validate`]), the moves
//! of a request's status ([`Move::target`]) and its reading at a time ([`lido_em`]) are what the
//! service's sandbox (`pgcc_adapter::SandboxPgcc`) simulates a PGCC with, in process.
//!
//! In-process use from synchronous tests: [`spawn_in_background`]. From async code or a binary:
//! [`serve`] on a bound listener.

mod admin_routes;
mod auth;
mod contract_routes;
mod errors;
mod faults;
mod referencias;
mod registro;
mod seed;
mod solicitacao;
mod spawned;
mod state;
mod traceparents;
mod webhook_receiver;

use actix_web::{web, App, HttpServer};

pub use errors::status_name;
pub use faults::FaultSpec;
pub use seed::{load_seed, normalize_cnpj, Seed, SeedCasoDeUso, SeedEmpresa, SeedVinculo};
pub use solicitacao::{
    lido_em, NovaSolicitacao, Solicitacao, SolicitacaoStatus, SolicitacaoStatusView,
    SolicitacaoView, StatusInformado,
};
pub use spawned::{spawn_in_background, spawn_in_background_with_token, SpawnedSim};
pub use state::{Created, Move, Store, JANELA_DE_DETALHES, MAX_CHAVES_CONTADAS};

/// The largest request body accepted (seeds for benchmarks can be big).
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// Builds the simulator's server on an already bound listener. `token`: when `Some`, the contract
/// routes require `Authorization: Bearer <token>`. The server must be awaited (or spawned) inside
/// an actix/tokio runtime.
pub fn serve(
    listener: std::net::TcpListener,
    seed: Seed,
    token: Option<String>,
) -> std::io::Result<actix_web::dev::Server> {
    let state = web::Data::new(state::AppState::new(seed, token));
    let traceparents = web::Data::new(traceparents::Received::default());
    let webhooks = web::Data::new(webhook_receiver::Received::default());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .app_data(traceparents.clone())
            .app_data(webhooks.clone())
            .app_data(web::PayloadConfig::new(MAX_BODY_BYTES))
            .wrap(actix_web::middleware::from_fn(traceparents::record))
            .configure(traceparents::configure)
            .configure(webhook_receiver::configure)
            .configure(contract_routes::configure)
            .configure(admin_routes::configure)
    })
    .workers(2)
    .disable_signals()
    .listen(listener)?
    .run();
    Ok(server)
}
