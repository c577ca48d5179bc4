//! `GET /api/eventos` (tag WebhookUrls, the spec names four tags and events are what webhooks
//! carry): catching up after a webhook outage.

use actix_web::{web, HttpResponse};
use application::EventListQuery;
use domain::Envelope;

use crate::api_key::ApiKeyHeader;
use crate::blocking::as_company;
use crate::bounded_page;
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::dto::event::{Evento, FiltroEventos, PaginaEventos};
use crate::error::ApiError;
use crate::state::ApiState;

/// The company's events in commit order, a page at a time: each exactly as its webhooks carry it,
/// with `id` = their `webhook-id`. Written whether or not the company has a webhook URL, kept
/// `retention.webhook_days` (30 by default).
#[utoipa::path(
    get,
    path = "/api/eventos",
    operation_id = "listarEventos",
    tag = "WebhookUrls",
    params(FiltroEventos),
    responses(
        (status = 200, description = "A page in commit order; follow `proximoCursor` until a page has no items, and keep the last cursor to read what commits later.", body = EnvelopeDoc<PaginaEventos>),
        (status = 400, description = "A parameter of the wrong type (`desde` not ISO 8601, a non-numeric limit).", body = EnvelopeDoc<Erro>),
        (status = 422, description = "A filter breaks a rule (unknown `tipo`, limit outside 1..500, bad cursor).", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn list(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    query: crate::query::Query<FiltroEventos>,
) -> Result<HttpResponse, ApiError> {
    let q = query.into_inner();
    let list_query = EventListQuery {
        event_type: q.event_type,
        since: q.since,
        cursor: q.cursor,
        limit: q.limit,
    };
    let page = as_company(&state, key, move |s, company| {
        Ok(s.list_events.execute(company, list_query)?)
    })
    .await?;
    let items = bounded_page::within(
        page.items,
        state.services.page_max_bytes,
        |e| application::encode_event_cursor(&e.position),
        Evento::from_stored,
    )
    .map_err(ApiError::Internal)?;
    // the documented shape is PaginaEventos; its items go out already serialized
    Ok(HttpResponse::Ok().json(Envelope::ok(bounded_page::Page::of(
        items,
        page.next_cursor,
    ))))
}
