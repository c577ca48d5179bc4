//! The W3C `traceparent` headers the simulator received, for the tests of the service's traces
//! (docs/observability.md): `GET /_sim/traceparents` lists the latest calls that carried one,
//! oldest first, as `{"metodo", "caminho", "traceparent"}` (the path without its query).

use std::collections::VecDeque;
use std::sync::Mutex;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, Error, HttpResponse};
use serde::Serialize;

/// The most calls kept (the oldest go first).
const KEPT: usize = 1000;

#[derive(Debug, Default)]
pub struct Received(Mutex<VecDeque<Call>>);

#[derive(Debug, Clone, Serialize)]
struct Call {
    metodo: String,
    caminho: String,
    traceparent: String,
}

/// The middleware (`from_fn`): notes the call's `traceparent`, if any, then serves it.
pub async fn record(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let traceparent = req
        .headers()
        .get("traceparent")
        .and_then(|value| value.to_str().ok());
    if let (Some(traceparent), Some(received)) =
        (traceparent, req.app_data::<web::Data<Received>>())
    {
        let mut calls = received.0.lock().unwrap_or_else(|p| p.into_inner());
        if calls.len() == KEPT {
            calls.pop_front();
        }
        calls.push_back(Call {
            metodo: req.method().to_string(),
            caminho: req.path().to_owned(),
            traceparent: traceparent.to_owned(),
        });
    }
    next.call(req).await
}

/// Registers `GET /_sim/traceparents` (before the `/_sim` scope, which would take it otherwise).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/_sim/traceparents", web::get().to(list));
}

async fn list(received: web::Data<Received>) -> HttpResponse {
    let calls: Vec<Call> = received
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .cloned()
        .collect();
    HttpResponse::Ok().json(calls)
}
