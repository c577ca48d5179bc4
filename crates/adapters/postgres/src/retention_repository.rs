use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Timestamptz};
use ports::{RepoError, RetentionRepository};
use uuid::Uuid;

use crate::conn::{count_u32, with_conn};
use crate::models::webhook_entrega::status;
use crate::schema::{webhook_entregas as we, webhook_tentativas as wt};
use crate::PgPool;

/// The batch is chosen in a `MATERIALIZED` CTE, evaluated once: as `IN (subquery)` the planner
/// may rescan the subquery, and each rescan skips the rows the statement already changed and
/// takes `LIMIT` more (measured: a batch of 2 blanked 5).
///
/// `purge_webhook_events` in one statement: $1 the cutoff, $2 the batch. Events older than the
/// cutoff with no delivery left (read through the unique key `(evento_id, webhook_url_id)`),
/// oldest first along `webhook_eventos_criado_em_idx`, skipping rows another purge holds. No
/// delivery is ever added to an existing event (deliveries are written with their event), so
/// an event found without deliveries stays so.
const PURGE_EVENTS: &str = "\
WITH alvo AS MATERIALIZED (
    SELECT ev.id
    FROM webhook_eventos ev
    WHERE ev.criado_em < $1
      AND NOT EXISTS (SELECT 1 FROM webhook_entregas e WHERE e.evento_id = ev.id)
    ORDER BY ev.criado_em
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
DELETE FROM webhook_eventos
USING alvo
WHERE webhook_eventos.id = alvo.id";

/// `blank_cancelled_creations` in one statement: $1 the cutoff, $2 now, $3 the batch. Cancelled
/// creations last attempted before the cutoff (along `solicitacoes_consentimento_canceladas_idx`)
/// that no idempotency key names any more (a retry under a live key may still confirm the row,
/// and a confirmation must find it whole), not blanked yet, oldest first. What is blanked:
/// - `cpf_titular` becomes `00000000000`, which satisfies the column's NOT NULL and its check
///   (11 digits) and is no one's CPF (the domain refuses repeated digits);
/// - `prova_coleta` (nullable) becomes NULL;
/// - `hash` (a SHA-256 over the CPF and the rest: an 11-digit CPF is cheap to find back from
///   it) becomes `apagado:` and the row's id: unique per row, as the key (empresa_id, hash)
///   requires, and never a hex SHA-256, so no lookup matches it; `hash_anterior` (the unsalted
///   hash of rows created before salts) becomes NULL.
///
/// The rest (company, use case, modality, consenting CNPJ, dates, status) is not personal data
/// and stays. `criacao = 'cancelada'` is repeated outside the CTE so that a row confirmed
/// meanwhile is never touched (the check `solicitacoes_consentimento_dados_apagados_check`
/// refuses it too).
const BLANK_CANCELLED: &str = "\
WITH alvo AS MATERIALIZED (
    SELECT c.id
    FROM solicitacoes_consentimento c
    WHERE c.criacao = 'cancelada' AND c.dados_apagados_em IS NULL
      AND c.criacao_tentativa_em < $1
      AND NOT EXISTS (SELECT 1 FROM chaves_idempotencia k WHERE k.recurso_id = c.id)
    ORDER BY c.criacao_tentativa_em
    LIMIT $3
    FOR UPDATE SKIP LOCKED
)
UPDATE solicitacoes_consentimento s
SET cpf_titular = '00000000000',
    prova_coleta = NULL,
    hash = 'apagado:' || s.id::text,
    hash_anterior = NULL,
    dados_apagados_em = $2
FROM alvo
WHERE s.id = alvo.id AND s.criacao = 'cancelada'";

/// [`RetentionRepository`] on the webhook outbox tables and `solicitacoes_consentimento`. Spans
/// companies by design (a worker's job); each call is one short transaction of at most `limit`
/// rows, and concurrent purges (several processes) skip each other's rows.
#[derive(Clone)]
pub struct PgRetentionRepository {
    pool: PgPool,
}

impl PgRetentionRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl RetentionRepository for PgRetentionRepository {
    /// In one transaction: locks up to `limit` final deliveries last changed before `before`
    /// (along `webhook_entregas_finais_idx`, oldest first, `SKIP LOCKED`; the lock re-checks the
    /// status, so a delivery replayed meanwhile is pending again and left alone), deletes their
    /// attempts, then them.
    fn purge_webhook_deliveries(
        &self,
        before: DateTime<Utc>,
        limit: u32,
    ) -> Result<u32, RepoError> {
        if limit == 0 {
            return Ok(0);
        }
        let purged = with_conn(&self.pool, "purging old webhook deliveries", |conn| {
            conn.transaction(|conn| {
                let ids: Vec<Uuid> = we::table
                    .filter(we::status.ne(status::PENDENTE))
                    .filter(we::atualizado_em.lt(before))
                    .order(we::atualizado_em)
                    .limit(i64::from(limit))
                    .select(we::id)
                    .for_update()
                    .skip_locked()
                    .load(conn)?;
                if ids.is_empty() {
                    return Ok(0);
                }
                diesel::delete(wt::table.filter(wt::entrega_id.eq_any(&ids))).execute(conn)?;
                diesel::delete(we::table.filter(we::id.eq_any(&ids))).execute(conn)
            })
        })?;
        Ok(count_u32(purged))
    }

    /// See `PURGE_EVENTS`.
    fn purge_webhook_events(&self, before: DateTime<Utc>, limit: u32) -> Result<u32, RepoError> {
        if limit == 0 {
            return Ok(0);
        }
        let purged = with_conn(&self.pool, "purging old webhook events", |conn| {
            diesel::sql_query(PURGE_EVENTS)
                .bind::<Timestamptz, _>(before)
                .bind::<BigInt, _>(i64::from(limit))
                .execute(conn)
        })?;
        Ok(count_u32(purged))
    }

    /// See `BLANK_CANCELLED`.
    fn blank_cancelled_creations(
        &self,
        before: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<u32, RepoError> {
        if limit == 0 {
            return Ok(0);
        }
        let blanked = with_conn(
            &self.pool,
            "blanking the personal data of cancelled creations",
            |conn| {
                diesel::sql_query(BLANK_CANCELLED)
                    .bind::<Timestamptz, _>(before)
                    .bind::<Timestamptz, _>(now)
                    .bind::<BigInt, _>(i64::from(limit))
                    .execute(conn)
            },
        )?;
        Ok(count_u32(blanked))
    }
}
