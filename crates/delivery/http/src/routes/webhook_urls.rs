//! `/api/webhook-urls` (tag WebhookUrls): register, list, choose the events, soft delete,
//! rotate the secret, re-enable, test, the delivery log and replays.

use actix_web::{web, HttpResponse};

use domain::Envelope;
use serde_json::json;
use uuid::Uuid;

use crate::api_key::ApiKeyHeader;
use crate::blocking::as_company;
use crate::bounded_page;
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro, Vazio};
use crate::dto::webhook_url::{
    AlterarEventosWebhookUrl, Entrega, LimiteEntregas, RegistrarWebhookUrl, SegredoRotacionado,
    TesteWebhookUrl, WebhookUrlRegistrada,
};
use crate::error::ApiError;
use crate::state::ApiState;

/// Registers a URL to receive the company's notifications; answers its signing secret, once.
#[utoipa::path(
    post,
    path = "/api/webhook-urls",
    operation_id = "registrarWebhookUrl",
    tag = "WebhookUrls",
    request_body(content(
        (RegistrarWebhookUrl = "application/json"),
        (RegistrarWebhookUrl = "text/json"),
        (RegistrarWebhookUrl = "application/*+json"),
    )),
    responses(
        (status = 200, description = "Registered; `segredo` is shown only now.", body = EnvelopeDoc<WebhookUrlRegistrada>),
        (status = 400, description = "Malformed JSON or unknown field.", body = EnvelopeDoc<Erro>),
        (status = 409, description = "The company already has this URL (compared normalized: scheme and host in any case, default port, fragment) registered and not removed.", body = EnvelopeDoc<Erro>),
        (status = 413, description = "Body over the configured limit.", body = EnvelopeDoc<Erro>),
        (status = 415, description = "Content-Type is not JSON.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "On `url`: not an absolute http(s) URL, not https where required, resolving to a non-public address, a host name that does not resolve (or not within `webhooks.dns_timeout_ms`; a failure is remembered for 5 s), or the company already has `webhooks.max_urls_per_company` URLs not removed (disabled ones count). On `eventos` (empty) or `eventos[i]` (an unknown type). All broken rules at once.", body = EnvelopeDoc<Erro>),
        (status = 429, description = "The company already has `webhooks.dns_in_flight_per_company` lookups of host names under way in this process (names that have not answered yet); nothing was looked up or stored (`Retry-After`). The limit and the duplicate are checked first: they never wait for a lookup.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn register(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    body: web::Json<RegistrarWebhookUrl>,
) -> Result<HttpResponse, ApiError> {
    let RegistrarWebhookUrl {
        url,
        events: eventos,
    } = body.into_inner();
    let registered = as_company(&state, key, move |s, company| {
        Ok(s.webhook_urls
            .register_choosing(company, &url, eventos.as_deref())?)
    })
    .await?;
    let mut data = WebhookUrlRegistrada::from(registered.webhook);
    data.secret = Some(registered.secret);
    Ok(HttpResponse::Ok().json(Envelope::ok_with_message(
        data,
        "Guarde o segredo agora: ele não será mostrado de novo.",
    )))
}

/// Lists the company's webhook URLs that are not removed (disabled ones flagged), oldest first.
#[utoipa::path(
    get,
    path = "/api/webhook-urls",
    operation_id = "listarWebhookUrls",
    tag = "WebhookUrls",
    responses(
        (status = 200, description = "The company's active webhook URLs.", body = EnvelopeDoc<Vec<WebhookUrlRegistrada>>),
    )
)]
pub async fn list(state: web::Data<ApiState>, key: ApiKeyHeader) -> Result<HttpResponse, ApiError> {
    let webhooks = as_company(&state, key, |s, company| {
        Ok(s.webhook_urls.list(company)?)
    })
    .await?;
    let data: Vec<WebhookUrlRegistrada> = webhooks.into_iter().map(Into::into).collect();
    Ok(HttpResponse::Ok().json(Envelope::ok(data)))
}

/// Chooses which event types the URL receives from now on (deliveries already written are
/// kept); `null` brings back every type, including types added later.
#[utoipa::path(
    patch,
    path = "/api/webhook-urls/{webhookUrlId}",
    operation_id = "alterarEventosWebhookUrl",
    tag = "WebhookUrls",
    params(("webhookUrlId" = Uuid, Path, description = "Id of the webhook URL.")),
    request_body(content(
        (AlterarEventosWebhookUrl = "application/json"),
        (AlterarEventosWebhookUrl = "text/json"),
        (AlterarEventosWebhookUrl = "application/*+json"),
    )),
    responses(
        (status = 200, description = "Changed; the URL as `GET /api/webhook-urls` lists it.", body = EnvelopeDoc<WebhookUrlRegistrada>),
        (status = 400, description = "Malformed JSON, `eventos` missing, or an unknown field.", body = EnvelopeDoc<Erro>),
        (status = 404, description = "No webhook URL with this id for the company (unknown, another company's, or removed); nothing changed.", body = EnvelopeDoc<Erro>),
        (status = 413, description = "Body over the configured limit.", body = EnvelopeDoc<Erro>),
        (status = 415, description = "Content-Type is not JSON.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "`eventos` empty, or `eventos[i]` an unknown type; nothing changed.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn choose_events(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
    body: web::Json<AlterarEventosWebhookUrl>,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&path)?;
    let Some(eventos) = body.into_inner().events else {
        return Err(ApiError::BadRequest(
            "campo obrigatório ausente `eventos` (use null para receber todos os tipos)".into(),
        ));
    };
    let webhook = as_company(&state, key, move |s, company| {
        Ok(s.webhook_urls
            .choose_events(company, id, eventos.as_deref())?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok_with_message(
        WebhookUrlRegistrada::from(webhook),
        "Eventos da webhook URL alterados.",
    )))
}

/// Sends a signed `webhook.teste` event to the URL now and answers that one attempt; it is kept
/// in the delivery log like any other (`entregue` or `falhou`, not retried).
#[utoipa::path(
    post,
    path = "/api/webhook-urls/{webhookUrlId}/testar",
    operation_id = "testarWebhookUrl",
    tag = "WebhookUrls",
    params(("webhookUrlId" = Uuid, Path, description = "Id of the webhook URL.")),
    responses(
        (status = 200, description = "The test was attempted (whatever the receiver answered): `statusHttp`, `latenciaMs`, `erro`.", body = EnvelopeDoc<TesteWebhookUrl>),
        (status = 404, description = "No webhook URL with this id for the company (unknown, another company's, or removed); nothing sent.", body = EnvelopeDoc<Erro>),
        (status = 429, description = "The company already has 2 tests under way; nothing sent (`Retry-After`).", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn test(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&path)?;
    let result = as_company(&state, key, move |s, company| {
        Ok(s.test_webhook_url.execute(company, id)?)
    })
    .await?;
    let mensagem = if result.error.is_none() {
        "Evento de teste entregue."
    } else {
        "Evento de teste não entregue; veja statusHttp e erro."
    };
    Ok(HttpResponse::Ok().json(Envelope::ok_with_message(
        TesteWebhookUrl::from(result),
        mensagem,
    )))
}

/// Soft deletes one of the company's webhook URLs: it stops being listed and notified, and the
/// record is kept with its removal time.
#[utoipa::path(
    delete,
    path = "/api/webhook-urls/{webhookUrlId}",
    operation_id = "removerWebhookUrl",
    tag = "WebhookUrls",
    params(("webhookUrlId" = Uuid, Path, description = "Id of the webhook URL.")),
    responses(
        (status = 200, description = "Removed.", body = EnvelopeDoc<Vazio>),
        (status = 404, description = "No active webhook URL with this id for the company (unknown, another company's, or already removed); nothing changed.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn delete(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    // A malformed id names no webhook URL: 404, as for an unknown one.
    let id = parse_id(&path)?;
    as_company(&state, key, move |s, company| {
        Ok(s.webhook_urls.delete(company, id)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok_with_message(
        json!({}),
        "Webhook URL removida.",
    )))
}

/// Replaces the URL's signing secret. Deliveries carry both signatures while the previous
/// secret's overlap lasts, so receivers can switch without losing any.
#[utoipa::path(
    post,
    path = "/api/webhook-urls/{webhookUrlId}/rotacionar-segredo",
    operation_id = "rotacionarSegredoWebhookUrl",
    tag = "WebhookUrls",
    params(("webhookUrlId" = Uuid, Path, description = "Id of the webhook URL.")),
    responses(
        (status = 200, description = "The new secret, shown only now.", body = EnvelopeDoc<SegredoRotacionado>),
        (status = 404, description = "No such webhook URL for the company.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn rotate_secret(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&path)?;
    let secret = as_company(&state, key, move |s, company| {
        Ok(s.webhook_urls.rotate_secret(company, id)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok_with_message(
        SegredoRotacionado { id, secret },
        "Guarde o novo segredo agora: ele não será mostrado de novo.",
    )))
}

/// Re-enables a URL disabled for failing: same id, secret and delivery log. Its pending
/// deliveries are sent again and new events reach it. An active URL is answered as it is.
#[utoipa::path(
    post,
    path = "/api/webhook-urls/{webhookUrlId}/reativar",
    operation_id = "reativarWebhookUrl",
    tag = "WebhookUrls",
    params(("webhookUrlId" = Uuid, Path, description = "Id of the webhook URL.")),
    responses(
        (status = 200, description = "Active (again); the URL as `GET /api/webhook-urls` lists it (`desativadaEm` null). Re-enabling an active URL changes nothing and answers the same.", body = EnvelopeDoc<WebhookUrlRegistrada>),
        (status = 404, description = "No webhook URL with this id for the company (unknown, another company's, or removed); nothing changed.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn reenable(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&path)?;
    let webhook = as_company(&state, key, move |s, company| {
        Ok(s.webhook_urls.reenable(company, id)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok_with_message(
        WebhookUrlRegistrada::from(webhook),
        "Webhook URL ativa.",
    )))
}

/// The URL's newest deliveries, each with its attempts (when, HTTP status, latency, error).
#[utoipa::path(
    get,
    path = "/api/webhook-urls/{webhookUrlId}/entregas",
    operation_id = "listarEntregas",
    tag = "WebhookUrls",
    params(("webhookUrlId" = Uuid, Path, description = "Id of the webhook URL."), LimiteEntregas),
    responses(
        (status = 200, description = "Newest first.", body = EnvelopeDoc<Vec<Entrega>>),
        (status = 404, description = "No such webhook URL for the company.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "`limite` outside 1..200.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn deliveries(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
    query: crate::query::Query<LimiteEntregas>,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&path)?;
    let limit = query.limit;
    let records = as_company(&state, key, move |s, company| {
        Ok(s.webhook_deliveries.list(company, id, limit)?)
    })
    .await?;
    // A list without a cursor (the newest `limite`): cut at the byte bound, the newest kept.
    let data = bounded_page::within(
        records,
        state.services.page_max_bytes,
        |_| String::new(),
        |r| Ok(Entrega::from(r)),
    )
    .map_err(ApiError::Internal)?
    .items;
    Ok(HttpResponse::Ok().json(Envelope::ok(data)))
}

/// Sends one delivery again, now, whatever its status (same event, same `webhook-id`).
#[utoipa::path(
    post,
    path = "/api/webhook-urls/{webhookUrlId}/entregas/{entregaId}/reenviar",
    operation_id = "reenviarEntrega",
    tag = "WebhookUrls",
    params(
        ("webhookUrlId" = Uuid, Path, description = "Id of the webhook URL."),
        ("entregaId" = Uuid, Path, description = "Id of the delivery."),
    ),
    responses(
        (status = 200, description = "Queued for sending now.", body = EnvelopeDoc<Vazio>),
        (status = 404, description = "No such delivery for the company's (not removed) URL.", body = EnvelopeDoc<Erro>),
        (status = 409, description = "The URL is disabled: re-enable it (`reativar`) first; nothing changed.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn replay(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (url_id, delivery_id) = path.into_inner();
    let (url_id, delivery_id) = (parse_id(&url_id)?, parse_id(&delivery_id)?);
    as_company(&state, key, move |s, company| {
        Ok(s.webhook_deliveries.replay(company, url_id, delivery_id)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok_with_message(
        json!({}),
        "Entrega reenfileirada.",
    )))
}

/// A malformed id names nothing: 404, as for an unknown one.
fn parse_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound(crate::error::Resource::WebhookUrl))
}
