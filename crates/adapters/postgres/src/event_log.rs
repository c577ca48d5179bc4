//! [`EventLog`] on `webhook_eventos`: the outbox's events read back, a keyset page at a time.

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Int8, Uuid as SqlUuid};
use domain::{CompanyId, EventType};
use ports::{EventFilter, EventLog, EventPosition, RepoError, StoredEvent};

use crate::models::WebhookEventoRow;
use crate::schema::webhook_eventos as ev;
use crate::settled;
use crate::topology::Topology;
use crate::{PgPool, ReadPools};

#[derive(Clone)]
pub struct PgEventLog {
    /// Where the feed is read (a replica within the lag bound, else the primary).
    reads: ReadPools,
    /// Whether the primary is a Citus coordinator (its watermark, `settled.rs`).
    topology: Topology,
}

impl PgEventLog {
    pub fn new(pool: PgPool) -> Self {
        Self {
            reads: ReadPools::primary_only(pool),
            topology: Topology::default(),
        }
    }

    /// The watermark read as on a Citus coordinator (`settled.rs`), on any database: lets one
    /// node's tests check it.
    pub fn watermark_as_on_citus(self) -> Self {
        self.topology.assume(true);
        self
    }

    /// The feed read through `reads` (a replica when one is within its lag bound).
    pub fn reading_from(mut self, reads: ReadPools) -> Self {
        self.reads = reads;
        self
    }
}

impl EventLog for PgEventLog {
    /// Read along `webhook_eventos_empresa_transacao_idx` (empresa_id, transacao, posicao, id):
    /// the cursor is the row comparison `(transacao, posicao, id) > (...)`, an index bound, and
    /// so is the watermark `transacao < settled` (`settled::watermark`, read just before on the
    /// same connection). Every transaction of this database below it has ended, committed or
    /// not, so the events read are all there will ever be before the last one returned. The
    /// type and `desde` filters are evaluated on the rows read. On a hot standby the snapshot is
    /// the replayed one: its running ids play the same part up to the replay point.
    fn list(
        &self,
        empresa: CompanyId,
        filter: &EventFilter,
        after: Option<EventPosition>,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, RepoError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let distributed = self.topology.distributed(self.reads.primary())?;
        let rows = self.reads.read("listing events", |conn| {
            let settled = settled::watermark(conn, distributed)?;
            let mut query = ev::table
                .filter(ev::empresa_id.eq(empresa.0))
                .filter(ev::tipo.ne(EventType::WebhookTest.as_str()))
                .filter(ev::transacao.lt(settled))
                .select((WebhookEventoRow::as_select(), ev::transacao, ev::posicao))
                .into_boxed();
            if let Some(tipo) = filter.event_type {
                query = query.filter(ev::tipo.eq(tipo.as_str()));
            }
            if let Some(desde) = filter.since {
                query = query.filter(ev::criado_em.ge(desde));
            }
            if let Some(cursor) = after {
                query = query.filter(
                    sql::<Bool>(
                        "(webhook_eventos.transacao, webhook_eventos.posicao, webhook_eventos.id) > (",
                    )
                    .bind::<Int8, _>(cursor.transaction)
                    .sql(", ")
                    .bind::<Int8, _>(cursor.sequence)
                    .sql(", ")
                    .bind::<SqlUuid, _>(cursor.id)
                    .sql(")"),
                );
            }
            query
                .order((ev::transacao.asc(), ev::posicao.asc(), ev::id.asc()))
                .limit(i64::from(limit))
                .load::<(WebhookEventoRow, i64, i64)>(conn)
        })?;
        Ok(rows
            .into_iter()
            .map(|(row, transaction, sequence)| StoredEvent {
                id: row.id,
                event_type: row.tipo,
                timestamp: row.criado_em,
                payload: row.payload,
                position: EventPosition {
                    transaction,
                    sequence,
                    id: row.id,
                },
            })
            .collect())
    }
}
