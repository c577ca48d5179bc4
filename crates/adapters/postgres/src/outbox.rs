//! The transactional outbox: the events of a change are written by the repository making the
//! change, on its connection and inside its transaction, so a change is never stored without its
//! event nor an event without its change. The sender reads them back through
//! [`crate::PgWebhookDeliveryRepository`].
//!
//! The statement here is declared with [`statement!`] (see `fixed_sql.rs`): prepared once per
//! connection, then only executed.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::{CompanyId, WebhookEvent};
use uuid::Uuid;

use crate::fixed_sql::statement;

/// The condition under which the webhook URL `u` takes an event of company `$empresa` and type
/// `$tipo` (SQL expressions): neither removed nor disabled, and taking that type:
/// `webhook_url_recebe` (migration `confirm_creations_in_one_call`: every type when `eventos`
/// is NULL, `auditoria.checkpoint` only when named, `domain::EventType::only_when_named`), a
/// SQL function PostgreSQL inlines, so that the creation's `consentimento_confirmar_criacao`
/// asks the same question. One definition for the deliveries written
/// ([`deliveries_of_eventos`]) and the events marked as having none ([`WriteEvents`]).
macro_rules! url_takes {
    ($empresa:literal, $tipo:literal) => {
        concat!(
            "u.empresa_id = ",
            $empresa,
            " AND u.removido_em IS NULL AND u.desativado_em IS NULL AND webhook_url_recebe(u.eventos, ",
            $tipo,
            ")"
        )
    };
}
pub(crate) use url_takes;

/// The deliveries of the events of a CTE named `eventos` (columns `id`, `empresa_id`, `tipo`,
/// `criado_em`): one `pendente` delivery per webhook URL of the event's company that takes it
/// ([`url_takes`]), due at once (at the event's timestamp), created and updated at the
/// event's timestamp. The URLs are read without locking them: a URL removed concurrently may
/// still get a delivery, which stays pending and is never claimed (the claim skips removed and
/// disabled URLs). One definition for every statement that writes events. Given `$empresa`
/// (a parameter), the events are all that company's and the URLs are read by it: on Citus the
/// join with `eventos` (an intermediate result there) then reads one shard of `webhook_urls`,
/// not all of them (`make bench` with `BENCH_CITUS=1`, docs/scaling.md).
macro_rules! deliveries_of_eventos {
    () => {
        crate::outbox::deliveries_of_eventos!(@ "eventos", "e.empresa_id", "")
    };
    ($empresa:literal) => {
        crate::outbox::deliveries_of_eventos!(@ "eventos", $empresa, " AND e.empresa_id = u.empresa_id")
    };
    // the deliveries of one stored event, `$evento` of company `$empresa` (parameters)
    (stored $evento:literal, $empresa:literal) => {
        concat!(
            crate::outbox::deliveries_of_eventos!(@ "webhook_eventos", $empresa, " AND e.empresa_id = u.empresa_id"),
            "
WHERE e.id = ", $evento, " AND e.empresa_id = ", $empresa
        )
    };
    (@ $eventos:literal, $empresa:literal, $same_company:literal) => {
        concat!(
            "INSERT INTO webhook_entregas (id, evento_id, webhook_url_id, empresa_id, status, \
                                      tentativas, proxima_tentativa_em, criado_em, atualizado_em, \
                                      tipo_evento)
SELECT gen_random_uuid(), e.id, u.id, e.empresa_id, 'pendente', 0,
       e.criado_em, e.criado_em, e.criado_em, e.tipo
FROM ", $eventos, " e
JOIN webhook_urls u ON ",
            crate::outbox::url_takes!($empresa, "e.tipo"),
            $same_company
        )
    };
}
pub(crate) use deliveries_of_eventos;

statement! {
    /// Writes a batch of events and their deliveries in one statement (one round trip whatever
    /// the batch size): the events come in as parallel arrays, each with its deliveries (see
    /// [`deliveries_of_eventos`]). Each event's `sem_entregas` comes from an uncorrelated join
    /// of the batch with the URLs (`tomados`: the events some URL takes), not from
    /// a correlated `NOT EXISTS`: Citus refuses a correlated subquery beside a
    /// set-returning function in FROM (the `unnest`), and plans this one (docs/scaling.md,
    /// "Citus"). Same snapshot, same answer.
    struct WriteEvents<'a> {
        ids: Vec<Uuid> as Array<SqlUuid>,
        empresas: Vec<Uuid> as Array<SqlUuid>,
        tipos: Vec<&'a str> as Array<Text>,
        payloads: Vec<String> as Array<Text>,
        timestamps: Vec<DateTime<Utc>> as Array<Timestamptz>,
        traceparents: Vec<Option<String>> as Array<Nullable<Text>>,
    }
    concat!(
        "WITH n AS (
    SELECT * FROM unnest($ids::uuid[], $empresas::uuid[], $tipos::text[], $payloads::text[],
                         $timestamps::timestamptz[], $traceparents::text[])
         WITH ORDINALITY AS n (id, empresa_id, tipo, payload, criado_em, traceparent, ordem)
), tomados AS (
    SELECT DISTINCT n.ordem FROM n JOIN webhook_urls u ON ",
        url_takes!("n.empresa_id", "n.tipo"),
        "
), eventos AS (
    INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em, traceparent,
                                 sem_entregas)
    SELECT n.id, n.empresa_id, n.tipo, n.payload, n.criado_em, n.traceparent,
           n.ordem NOT IN (SELECT ordem FROM tomados)
    FROM n
    RETURNING id, empresa_id, tipo, criado_em
)
",
        deliveries_of_eventos!()
    )
}

/// Writes `event` (its body serialized once, as sent) and its pending deliveries. Call it inside
/// the transaction of the change it tells about. With telemetry on, the event keeps the
/// `traceparent` of the current span (the change's), which its deliveries send: a delivery made
/// later, by another thread or process, still joins the trace of the change.
pub(crate) fn write_event(conn: &mut PgConnection, event: &WebhookEvent) -> QueryResult<()> {
    write_events(conn, std::slice::from_ref(event))
}

/// [`write_event`] for a batch, in one statement; nothing for an empty batch.
pub(crate) fn write_events(conn: &mut PgConnection, events: &[WebhookEvent]) -> QueryResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    let mut batch = WriteEvents {
        ids: Vec::with_capacity(events.len()),
        empresas: Vec::with_capacity(events.len()),
        tipos: Vec::with_capacity(events.len()),
        payloads: Vec::with_capacity(events.len()),
        timestamps: Vec::with_capacity(events.len()),
        traceparents: Vec::with_capacity(events.len()),
    };
    // the change's trace (telemetry on), for the deliveries sent later (see `traceparent`)
    let traceparent = telemetry::current_traceparent();
    for event in events {
        batch.ids.push(event.id);
        batch.empresas.push(event.company_id.0);
        batch.tipos.push(event.event_type.as_str());
        batch.payloads.push(payload(event)?);
        batch.timestamps.push(event.timestamp);
        batch.traceparents.push(traceparent.clone());
    }
    batch.execute(conn)?;
    Ok(())
}

/// One event of `company` whose body was serialized before (`payload`, as sent), with its
/// pending deliveries: one statement, within that company.
pub(crate) fn write_stored_event(
    conn: &mut PgConnection,
    id: Uuid,
    company: CompanyId,
    tipo: &str,
    payload: &str,
    at: DateTime<Utc>,
) -> QueryResult<()> {
    WriteEvents {
        ids: vec![id],
        empresas: vec![company.0],
        tipos: vec![tipo],
        payloads: vec![payload.to_owned()],
        timestamps: vec![at],
        traceparents: vec![None],
    }
    .execute(conn)?;
    Ok(())
}

/// The exact body of `event`: `{"type", "timestamp", "data"}`.
pub(crate) fn payload(event: &WebhookEvent) -> QueryResult<String> {
    serde_json::to_string(&event.payload())
        .map_err(|e| DieselError::SerializationError(Box::new(e)))
}
