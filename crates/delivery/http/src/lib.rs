//! HTTP delivery over actix-web: routes, extractors, envelope responses, content negotiation and
//! the OpenAPI document. `main` and the tests build the very same app with [`build_server`].

pub mod api_key;
pub mod blocking;
pub mod dto;
pub mod error;
pub mod media;
pub mod routes;

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::middleware::{from_fn, Logger};
use actix_web::{web, App, HttpServer};
use application::Services;

pub use error::ApiError;
pub use routes::openapi::{document_json as openapi_json, ApiDoc};

/// HTTP settings the delivery layer needs.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Largest accepted request body, in bytes (413 above it).
    pub body_limit_bytes: usize,
    /// Worker threads of the HTTP server (0: one per core).
    pub workers: usize,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            body_limit_bytes: 64 * 1024,
            workers: 0,
        }
    }
}

/// The app's routes and shared configuration, for `App::configure`.
pub fn configure(
    services: Arc<Services>,
    settings: &HttpSettings,
) -> impl FnOnce(&mut web::ServiceConfig) {
    let limit = settings.body_limit_bytes;
    move |cfg: &mut web::ServiceConfig| {
        cfg.app_data(web::Data::from(services))
            .app_data(media::json_config(limit))
            .app_data(web::PayloadConfig::new(limit))
            .app_data(web::QueryConfig::default().error_handler(|err, _| {
                let _ = err;
                ApiError::BadRequest(
                    "parâmetro de consulta inválido; empresaVinculoPgccId deve ser um UUID".into(),
                )
                .into()
            }))
            .configure(routes::configure)
            .default_service(web::to(routes::not_found));
    }
}

/// The HTTP server on an already bound listener (port 0 in tests).
pub fn build_server(
    listener: TcpListener,
    services: Arc<Services>,
    settings: HttpSettings,
) -> std::io::Result<Server> {
    let settings_for_app = settings.clone();
    let mut server = HttpServer::new(move || {
        App::new()
            .wrap(from_fn(media::negotiate))
            // Method and path only: no query string (filters may carry a CPF), no headers (the
            // Api-Key), no user agent.
            .wrap(
                Logger::new("%a %{method}xi %U %s %b %Dms")
                    .custom_request_replace("method", |req| req.method().to_string()),
            )
            .configure(configure(services.clone(), &settings_for_app))
    });
    if settings.workers > 0 {
        server = server.workers(settings.workers);
    }
    Ok(server.listen(listener)?.run())
}
