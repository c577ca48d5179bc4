//! `GET /health/live` and `GET /health/ready`: outside `/api`, no key, no personal data.

use actix_web::{web, HttpResponse};
use application::Operations;
use serde_json::{json, Value};

/// The process is up and answering.
pub async fn live() -> HttpResponse {
    HttpResponse::Ok().json(json!({ "status": "ok" }))
}

/// 200 when every required check is up (database reachable, migrations applied), 503 when not;
/// the body lists each check, the PGCC's included (reported, not required). It reads the
/// probes' latest answers (at most a second old; see `application::Operations::readiness`):
/// no query, no pool connection, no blocking hop, however often it is polled.
pub async fn ready(operations: web::Data<Operations>) -> HttpResponse {
    let readiness = operations.readiness();
    let checks: serde_json::Map<String, Value> = readiness
        .checks
        .iter()
        .map(|c| {
            (
                c.name.to_owned(),
                json!({
                    "status": if c.up { "up" } else { "down" },
                    "required": c.required,
                    "detail": c.detail,
                }),
            )
        })
        .collect();
    let body = json!({
        "status": if readiness.ready { "ready" } else { "unavailable" },
        "checks": checks,
    });
    if readiness.ready {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable()
            .insert_header(("Retry-After", "5"))
            .json(body)
    }
}

/// `/health/live`, `/health/ready` and `/metrics`, with what they read.
pub fn configure(operability: &crate::Operability) -> impl FnOnce(&mut web::ServiceConfig) {
    let operations = web::Data::from(operability.operations.clone());
    let metrics = web::Data::from(operability.metrics.clone());
    let access = web::Data::new(crate::metrics::MetricsAccess {
        token: operability.metrics_token.clone(),
    });
    move |cfg: &mut web::ServiceConfig| {
        cfg.app_data(operations)
            .app_data(metrics)
            .app_data(access)
            .route("/health/live", web::get().to(live))
            .route("/health/ready", web::get().to(ready))
            .route("/metrics", web::get().to(crate::metrics::handler));
    }
}
