//! Wire shapes of `GET /api/eventos`: the company's events as its webhooks carry them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::enumerations::TipoEventoAssinavel;
use super::text_rules::EventCursor;

/// Filters and paging of `GET /api/eventos`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct FiltroEventos {
    /// Only events of this type.
    #[param(value_type = Option<TipoEventoAssinavel>)]
    #[serde(rename = "tipo")]
    pub event_type: Option<String>,
    /// Only events whose `timestamp` is at or after this instant (ISO 8601).
    #[serde(rename = "desde")]
    pub since: Option<DateTime<Utc>>,
    /// `proximoCursor` of the previous page (or of the last page read, to see what is new).
    #[param(value_type = Option<EventCursor>, inline)]
    pub cursor: Option<String>,
    /// Page size, 1 to 500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    #[serde(rename = "limite")]
    pub limit: Option<u32>,
}

/// One event: exactly the body its webhook deliveries carry (`type`, `timestamp`, `data`), plus
/// `id`, the `webhook-id` header of those deliveries: de-duplicate on it across both paths.
#[derive(Debug, Serialize, ToSchema)]
pub struct Evento {
    /// The event id, equal to the `webhook-id` of every delivery of it.
    pub id: Uuid,
    /// The event type.
    #[serde(rename = "type")]
    #[schema(value_type = TipoEventoAssinavel)]
    pub event_type: String,
    /// When it happened (the webhook body's `timestamp`).
    #[schema(value_type = DateTime<Utc>)]
    pub timestamp: Value,
    /// The webhook body's `data`: the request as it was right after the change (CPF masked, no
    /// proof of consent) for `solicitacao.*`, the counts for `casos-de-uso.sincronizados`.
    #[schema(value_type = Object)]
    pub data: Value,
}

/// A page of events, in the order they committed.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaginaEventos {
    #[serde(rename = "itens")]
    pub items: Vec<Evento>,
    /// Pass as `cursor` for the next page. Never `null` on a page with items: on the last page
    /// it resumes after its last item, and a read from it with nothing new answers no items and
    /// the same cursor. `null` only on an empty first page.
    #[serde(rename = "proximoCursor")]
    pub next_cursor: Option<String>,
}

/// The stored body `{"type", "timestamp", "data"}`, read back as sent.
#[derive(Deserialize)]
struct Body {
    #[serde(rename = "type")]
    event_type: String,
    timestamp: Value,
    data: Value,
}

impl Evento {
    /// The event `id` whose deliveries send `payload`: the same values, `id` added. Fails only
    /// on a payload this service did not write.
    pub fn from_stored(event: ports::StoredEvent) -> anyhow::Result<Evento> {
        let body: Body = serde_json::from_str(&event.payload)
            .map_err(|e| anyhow::anyhow!("a stored event's payload is unreadable: {e}"))?;
        Ok(Evento {
            id: event.id,
            event_type: body.event_type,
            timestamp: body.timestamp,
            data: body.data,
        })
    }
}
