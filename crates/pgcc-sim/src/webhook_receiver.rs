//! A webhook receiver for local demos (the README's walk-through registers
//! `http://127.0.0.1:<simulator port>/_sim/webhooks`), so a demo never posts events to the
//! Internet: `POST /_sim/webhooks` keeps the delivery and answers 204; `GET /_sim/webhooks` lists
//! the latest ones, oldest first, as `{"em", "webhookId", "webhookTimestamp", "webhookSignature",
//! "corpo"}` (the Standard Webhooks headers as sent, `null` when absent; the body as JSON, or as
//! text when it is not JSON). Nothing is verified: the signature is shown for the reader to check
//! (docs/webhooks.md). The oldest go first past [`KEPT`].

use std::collections::VecDeque;
use std::sync::Mutex;

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Serialize;

/// The most deliveries kept (the oldest go first).
pub const KEPT: usize = 100;

#[derive(Debug, Default)]
pub struct Received(Mutex<VecDeque<Delivery>>);

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Delivery {
    em: chrono::DateTime<chrono::Utc>,
    webhook_id: Option<String>,
    webhook_timestamp: Option<String>,
    webhook_signature: Option<String>,
    corpo: serde_json::Value,
}

/// Registers `POST` and `GET /_sim/webhooks` (before the `/_sim` scope, which would take them
/// otherwise).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/_sim/webhooks", web::post().to(receive))
        .route("/_sim/webhooks", web::get().to(list));
}

async fn receive(
    received: web::Data<Received>,
    req: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let corpo = serde_json::from_slice(&body)
        .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(&body).into()));
    let delivery = Delivery {
        em: chrono::Utc::now(),
        webhook_id: header("webhook-id"),
        webhook_timestamp: header("webhook-timestamp"),
        webhook_signature: header("webhook-signature"),
        corpo,
    };
    let mut kept = received.0.lock().unwrap_or_else(|p| p.into_inner());
    if kept.len() == KEPT {
        kept.pop_front();
    }
    kept.push_back(delivery);
    HttpResponse::NoContent().finish()
}

async fn list(received: web::Data<Received>) -> HttpResponse {
    let kept: Vec<Delivery> = received
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .cloned()
        .collect();
    HttpResponse::Ok().json(kept)
}
