use chrono::{DateTime, Utc};
use diesel::prelude::*;
use uuid::Uuid;

use crate::schema::webhook_eventos;

/// A row of `webhook_eventos`: one event of the outbox, with the exact body every delivery of it
/// sends. Written only by the outbox (`unnest` of the batch, see `outbox.rs`), so it has no
/// insert form.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = webhook_eventos, check_for_backend(diesel::pg::Pg))]
pub struct WebhookEventoRow {
    pub id: Uuid,
    pub empresa_id: Uuid,
    pub tipo: String,
    pub payload: String,
    pub criado_em: DateTime<Utc>,
}
