//! The transactional outbox: the events of a change are written by the repository making the
//! change, on its connection and inside its transaction, so a change is never stored without its
//! event nor an event without its change. The sender reads them back through
//! [`crate::PgWebhookDeliveryRepository`].

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, Text, Timestamptz, Uuid as SqlUuid};
use domain::WebhookEvent;

/// Writes a batch of events and their deliveries in one statement (one round trip whatever the
/// batch size): the events come in as parallel arrays ($1 ids, $2 companies, $3 types,
/// $4 payloads, $5 timestamps), and each gets one `pendente` delivery per webhook URL of its
/// company that is neither removed nor disabled, due at once (at the event's timestamp), created
/// and updated at the event's timestamp. The URLs are read without locking them: a URL removed
/// concurrently may still get a delivery, which stays pending and is never claimed (the claim
/// skips removed and disabled URLs).
const WRITE_EVENTS: &str = "\
WITH eventos AS (
    INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em)
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[])
    RETURNING id, empresa_id, criado_em
)
INSERT INTO webhook_entregas (id, evento_id, webhook_url_id, empresa_id, status, tentativas,
                              proxima_tentativa_em, criado_em, atualizado_em)
SELECT gen_random_uuid(), e.id, u.id, e.empresa_id, 'pendente', 0,
       e.criado_em, e.criado_em, e.criado_em
FROM eventos e
JOIN webhook_urls u ON u.empresa_id = e.empresa_id
WHERE u.removido_em IS NULL AND u.desativado_em IS NULL";

/// Writes `event` (its body serialized once, as sent) and its pending deliveries. Call it inside
/// the transaction of the change it tells about.
pub(crate) fn write_event(conn: &mut PgConnection, event: &WebhookEvent) -> QueryResult<()> {
    write_events(conn, std::slice::from_ref(event))
}

/// [`write_event`] for a batch, in one statement; nothing for an empty batch.
pub(crate) fn write_events(conn: &mut PgConnection, events: &[WebhookEvent]) -> QueryResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    let mut ids = Vec::with_capacity(events.len());
    let mut empresas = Vec::with_capacity(events.len());
    let mut tipos = Vec::with_capacity(events.len());
    let mut payloads = Vec::with_capacity(events.len());
    let mut timestamps = Vec::with_capacity(events.len());
    for event in events {
        ids.push(event.id);
        empresas.push(event.empresa_id.0);
        tipos.push(event.tipo.as_str());
        payloads.push(payload(event)?);
        timestamps.push(event.timestamp);
    }
    diesel::sql_query(WRITE_EVENTS)
        .bind::<Array<SqlUuid>, _>(ids)
        .bind::<Array<SqlUuid>, _>(empresas)
        .bind::<Array<Text>, _>(tipos)
        .bind::<Array<Text>, _>(payloads)
        .bind::<Array<Timestamptz>, _>(timestamps)
        .execute(conn)?;
    Ok(())
}

/// The exact body of `event`: `{"type", "timestamp", "data"}`.
fn payload(event: &WebhookEvent) -> QueryResult<String> {
    serde_json::to_string(&event.payload())
        .map_err(|e| DieselError::SerializationError(Box::new(e)))
}
