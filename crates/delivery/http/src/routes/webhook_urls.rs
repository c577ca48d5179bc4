//! `/api/webhook-urls` (tag WebhookUrls): register, list, soft delete.

use actix_web::{web, HttpResponse};
use application::Services;
use domain::Envelope;
use serde_json::json;
use uuid::Uuid;

use crate::api_key::ApiKeyHeader;
use crate::blocking::as_company;
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro, Vazio};
use crate::dto::webhook_url::{RegistrarWebhookUrl, WebhookUrlRegistrada};
use crate::error::ApiError;

/// Registers a URL to receive the company's notifications.
#[utoipa::path(
    post,
    path = "/api/webhook-urls",
    tag = "WebhookUrls",
    request_body(content(
        (RegistrarWebhookUrl = "application/json"),
        (RegistrarWebhookUrl = "text/json"),
        (RegistrarWebhookUrl = "application/*+json"),
    )),
    responses(
        (status = 200, description = "Registered.", body = EnvelopeDoc<WebhookUrlRegistrada>),
        (status = 400, description = "Malformed JSON or unknown field.", body = EnvelopeDoc<Erro>),
        (status = 413, description = "Body over the configured limit.", body = EnvelopeDoc<Erro>),
        (status = 415, description = "Content-Type is not JSON.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "Not an absolute http(s) URL.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn register(
    services: web::Data<Services>,
    key: ApiKeyHeader,
    body: web::Json<RegistrarWebhookUrl>,
) -> Result<HttpResponse, ApiError> {
    let url = body.into_inner().url;
    let webhook = as_company(&services, key, move |s, company| {
        Ok(s.webhook_urls.register(company, &url)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(WebhookUrlRegistrada::from(webhook))))
}

/// Lists the company's active (not removed) webhook URLs, oldest first.
#[utoipa::path(
    get,
    path = "/api/webhook-urls",
    tag = "WebhookUrls",
    responses(
        (status = 200, description = "The company's active webhook URLs.", body = EnvelopeDoc<Vec<WebhookUrlRegistrada>>),
    )
)]
pub async fn list(
    services: web::Data<Services>,
    key: ApiKeyHeader,
) -> Result<HttpResponse, ApiError> {
    let webhooks = as_company(&services, key, |s, company| {
        Ok(s.webhook_urls.list(company)?)
    })
    .await?;
    let data: Vec<WebhookUrlRegistrada> = webhooks.into_iter().map(Into::into).collect();
    Ok(HttpResponse::Ok().json(Envelope::ok(data)))
}

/// Soft deletes one of the company's webhook URLs: it stops being listed and notified, and the
/// record is kept with its removal time.
#[utoipa::path(
    delete,
    path = "/api/webhook-urls/{webhookUrlId}",
    tag = "WebhookUrls",
    params(("webhookUrlId" = Uuid, Path, description = "Id of the webhook URL.")),
    responses(
        (status = 200, description = "Removed.", body = EnvelopeDoc<Vazio>),
        (status = 404, description = "No active webhook URL with this id for the company (unknown, another company's, or already removed); nothing changed.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn delete(
    services: web::Data<Services>,
    key: ApiKeyHeader,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    // A malformed id names no webhook URL: 404, as for an unknown one.
    let id = Uuid::parse_str(&path.into_inner()).map_err(|_| ApiError::NotFound("Webhook URL"))?;
    as_company(&services, key, move |s, company| {
        Ok(s.webhook_urls.delete(company, id)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok_with_message(
        json!({}),
        "Webhook URL removida.",
    )))
}
