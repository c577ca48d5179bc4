//! [`EventLog`] on `webhook_eventos`: the outbox's events read back, a keyset page at a time.

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Timestamptz, Uuid as SqlUuid};
use domain::{CompanyId, EventType};
use ports::{EventFilter, EventLog, ListCursor, RepoError, StoredEvent};

use crate::conn::with_conn;
use crate::models::WebhookEventoRow;
use crate::schema::webhook_eventos as ev;
use crate::PgPool;

#[derive(Clone)]
pub struct PgEventLog {
    pool: PgPool,
}

impl PgEventLog {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl EventLog for PgEventLog {
    /// Read along `webhook_eventos_empresa_criado_em_idx` (empresa_id, criado_em, id): the
    /// cursor is the row comparison `(criado_em, id) > ($criado_em, $id)`, an index bound, as in
    /// the consent list; the type filter is evaluated on the rows read.
    fn list(
        &self,
        empresa: CompanyId,
        filter: &EventFilter,
        after: Option<ListCursor>,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, RepoError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows = with_conn(&self.pool, "listing events", |conn| {
            let mut query = ev::table
                .filter(ev::empresa_id.eq(empresa.0))
                .filter(ev::tipo.ne(EventType::WebhookTest.as_str()))
                .select(WebhookEventoRow::as_select())
                .into_boxed();
            if let Some(tipo) = filter.event_type {
                query = query.filter(ev::tipo.eq(tipo.as_str()));
            }
            if let Some(desde) = filter.since {
                query = query.filter(ev::criado_em.ge(desde));
            }
            if let Some(cursor) = after {
                query = query.filter(
                    sql::<Bool>("(webhook_eventos.criado_em, webhook_eventos.id) > (")
                        .bind::<Timestamptz, _>(cursor.created_at)
                        .sql(", ")
                        .bind::<SqlUuid, _>(cursor.id)
                        .sql(")"),
                );
            }
            query
                .order((ev::criado_em.asc(), ev::id.asc()))
                .limit(i64::from(limit))
                .load(conn)
        })?;
        Ok(rows
            .into_iter()
            .map(|row| StoredEvent {
                id: row.id,
                event_type: row.tipo,
                timestamp: row.criado_em,
                payload: row.payload,
            })
            .collect())
    }
}
