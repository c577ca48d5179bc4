use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Timestamptz, Uuid as SqlUuid};
use ports::{RepoError, RetentionRepository};
use uuid::Uuid;

use crate::fixed_sql::statement;
use crate::per_company::{companies_with, each_company};
use crate::PgPool;

// Every purge runs within one company (issue 21, part 3): the companies with something to purge
// are found by one probe of a per-company partial index each, then each company's rows are
// read along the same index, only the rows that can go. The cost of a call follows the
// companies and the rows purged, never the rows that must stay (a million deliveries stuck
// pending, or the events they hold).

statement! {
    /// Companies (in id order) with a final delivery last changed before `before`: one probe of
    /// `webhook_entregas_empresa_finais_idx` each.
    struct CompaniesWithOldDeliveries {
        before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    companies_with!(
        "SELECT 1 FROM webhook_entregas d
    WHERE d.empresa_id = e.empresa_id AND d.status <> 'pendente' AND d.atualizado_em < $before"
    )
}

statement! {
    /// One company's final deliveries last changed before `before`, oldest first along
    /// `webhook_entregas_empresa_finais_idx`, locked (`SKIP LOCKED`: a delivery replayed or
    /// purged by another process meanwhile is left alone; the lock re-checks the status, so a
    /// replayed one, pending again, is not taken). Answers the ids and their events.
    struct LockOldDeliveries {
        empresa_id: Uuid as SqlUuid,
        before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    "SELECT id, evento_id FROM webhook_entregas
WHERE empresa_id = $empresa_id AND status <> 'pendente' AND atualizado_em < $before
ORDER BY atualizado_em
LIMIT $limit
FOR UPDATE SKIP LOCKED"
}

statement! {
    /// Deletes the deliveries `ids` of the company (locked by [`LockOldDeliveries`]; their
    /// attempts gone first: [`DeleteAttempts`]).
    struct DeleteDeliveries {
        ids: Vec<Uuid> as Array<SqlUuid>,
        empresa_id: Uuid as SqlUuid,
    }
    "DELETE FROM webhook_entregas WHERE empresa_id = $empresa_id AND id = ANY ($ids)"
}

statement! {
    /// Deletes the attempts of the deliveries `ids` (locked by [`LockOldDeliveries`]), before
    /// the deliveries they reference.
    struct DeleteAttempts {
        empresa_id: Uuid as SqlUuid,
        ids: Vec<Uuid> as Array<SqlUuid>,
    }
    "DELETE FROM webhook_tentativas WHERE empresa_id = $empresa_id AND entrega_id = ANY ($ids)"
}

statement! {
    /// Locks the company's events `ids` (in id order, so two purges lock them in the same order
    /// and never deadlock). A purge that deleted another delivery of one of them waits here for
    /// the other purge's commit; the next statement then sees both deletions (READ COMMITTED
    /// takes a new snapshot per statement), so the event's last delivery is never taken by two
    /// purges that each still see the other's.
    struct LockEvents {
        ids: Vec<Uuid> as Array<SqlUuid>,
        empresa_id: Uuid as SqlUuid,
    }
    "SELECT id FROM webhook_eventos
WHERE empresa_id = $empresa_id AND id = ANY ($ids)
ORDER BY id
FOR UPDATE"
}

statement! {
    /// Deletes the company's events `ids` that no delivery holds any more. Each was created
    /// before its delivery was last changed, so before the cutoff too.
    struct DeleteReleasedEvents {
        ids: Vec<Uuid> as Array<SqlUuid>,
        empresa_id: Uuid as SqlUuid,
    }
    "DELETE FROM webhook_eventos ev
WHERE ev.empresa_id = $empresa_id AND ev.id = ANY ($ids)
  AND NOT EXISTS (SELECT 1 FROM webhook_entregas d
                  WHERE d.empresa_id = ev.empresa_id AND d.evento_id = ev.id)"
}

statement! {
    /// Companies (in id order) with an event created before `before` that never had a delivery:
    /// one probe of `webhook_eventos_empresa_sem_entregas_idx` each.
    struct CompaniesWithOldEvents {
        before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    companies_with!(
        "SELECT 1 FROM webhook_eventos ev
    WHERE ev.empresa_id = e.empresa_id AND ev.sem_entregas AND ev.criado_em < $before"
    )
}

statement! {
    /// One company's events created before `before` that never had a delivery (`sem_entregas`,
    /// written with the event: see `outbox::sem_entregas`), oldest first along
    /// `webhook_eventos_empresa_sem_entregas_idx`, skipping rows another purge holds. No delivery
    /// is ever added to an existing event, so a marked event stays without one. The batch is
    /// chosen in a `MATERIALIZED` CTE, evaluated once: as `IN (subquery)` the planner may rescan
    /// it, and each rescan skips the rows already changed and takes `limit` more.
    struct PurgeEvents {
        empresa_id: Uuid as SqlUuid,
        before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    "WITH alvo AS MATERIALIZED (
    SELECT id FROM webhook_eventos
    WHERE empresa_id = $empresa_id AND sem_entregas AND criado_em < $before
    ORDER BY criado_em
    LIMIT $limit
    FOR UPDATE SKIP LOCKED
)
DELETE FROM webhook_eventos ev
USING alvo
WHERE ev.empresa_id = $empresa_id AND ev.id = alvo.id"
}

statement! {
    /// Companies (in id order) with a cancelled creation, not blanked, last attempted before
    /// `before`: one probe of `solicitacoes_consentimento_empresa_canceladas_idx` each.
    struct CompaniesWithOldCancelled {
        before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    companies_with!(
        "SELECT 1 FROM solicitacoes_consentimento c
    WHERE c.empresa_id = e.empresa_id AND c.criacao = 'cancelada' AND c.dados_apagados_em IS NULL
      AND c.criacao_tentativa_em < $before"
    )
}

statement! {
    /// `blank_cancelled_creations` for one company: its cancelled creations last attempted
    /// before `before` (along `solicitacoes_consentimento_empresa_canceladas_idx`) that no
    /// idempotency key names any more (a retry under a live key may still confirm the row, and
    /// a confirmation must find it whole), not blanked yet, oldest first. What is blanked:
    /// - `cpf_titular` becomes `00000000000`, which satisfies the column's NOT NULL and its check
    ///   (11 digits) and is no one's CPF (the domain refuses repeated digits);
    /// - `prova_coleta` (nullable) becomes NULL;
    /// - `hash` (a SHA-256 over the CPF and the rest: an 11-digit CPF is cheap to find back from
    ///   it) becomes `apagado:` and the row's id: unique per row, as the key (empresa_id, hash)
    ///   requires, and never a hex SHA-256, so no lookup matches it; `hash_anterior` (the
    ///   unsalted hash of rows created before salts) becomes NULL.
    ///
    /// The rest (company, use case, modality, consenting CNPJ, dates, status) is not personal
    /// data and stays. Each blanked row gets an entry in the company's audit log (cause
    /// `retencao`, status unchanged, no proof, the blanked hash; docs/auditoria.md); the
    /// count is of the rows blanked. `criacao = 'cancelada'` is repeated outside the CTE so that a row
    /// confirmed meanwhile is never touched (the check
    /// `solicitacoes_consentimento_dados_apagados_check` refuses it too). A cancelled creation
    /// still named by a key is passed over until the key's purge: the keys live a day, the
    /// blanking waits a week, so those are few.
    struct BlankCancelled {
        empresa_id: Uuid as SqlUuid,
        before: DateTime<Utc> as Timestamptz,
        now: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    // the owner's `consentimento_apagar_canceladas` (issue 36: the service's role changes no
    // request itself); one row a blanked request, as `execute` counts them
    "SELECT 1 FROM generate_series(1, consentimento_apagar_canceladas($empresa_id, $before, $now, $limit))"
}

statement! {
    /// Companies (in id order) with a record of a read of personal data older than `before`:
    /// one probe of `acessos_dados_pessoais_empresa_em_idx` each.
    struct CompaniesWithOldAccesses {
        before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    companies_with!(
        "SELECT 1 FROM acessos_dados_pessoais a
    WHERE a.empresa_id = e.empresa_id AND a.em < $before"
    )
}

statement! {
    /// One company's records of reads older than `before`, oldest first along
    /// `acessos_dados_pessoais_empresa_em_idx`: a keyset batch (a `MATERIALIZED` CTE, evaluated
    /// once, as in `PurgeEvents`). Rows are only ever inserted, so no lock is skipped.
    struct PurgeAccesses {
        empresa_id: Uuid as SqlUuid,
        before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    "WITH alvo AS MATERIALIZED (
    SELECT id FROM acessos_dados_pessoais
    WHERE empresa_id = $empresa_id AND em < $before
    ORDER BY em, id
    LIMIT $limit
)
DELETE FROM acessos_dados_pessoais a
USING alvo
WHERE a.empresa_id = $empresa_id AND a.id = alvo.id"
}

/// A delivery locked by [`LockOldDeliveries`].
#[derive(QueryableByName)]
struct OldDelivery {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    evento_id: Uuid,
}

/// [`RetentionRepository`] on the webhook outbox tables and `solicitacoes_consentimento`. Each
/// call works company by company, each company's batch one short transaction, at most `limit`
/// rows in all; concurrent purges (several processes) skip each other's rows.
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
    /// Per company, in one transaction: locks up to its share of final deliveries last changed
    /// before `before` (`LockOldDeliveries`), deletes them with their attempts, then deletes
    /// their events that no delivery holds any more (`LockEvents`, `DeleteReleasedEvents`):
    /// an event goes with its last delivery, so the event purge never has to look for them.
    fn purge_webhook_deliveries(
        &self,
        before: DateTime<Utc>,
        limit: u32,
    ) -> Result<u32, RepoError> {
        each_company(
            &self.pool,
            limit,
            "purging old webhook deliveries",
            |conn, limit| CompaniesWithOldDeliveries { before, limit }.load(conn),
            |conn, empresa_id, limit| {
                conn.transaction(|conn| {
                    let old: Vec<OldDelivery> = LockOldDeliveries {
                        empresa_id,
                        before,
                        limit,
                    }
                    .load(conn)?;
                    if old.is_empty() {
                        return Ok(0);
                    }
                    let (ids, mut events): (Vec<Uuid>, Vec<Uuid>) =
                        old.into_iter().map(|d| (d.id, d.evento_id)).unzip();
                    DeleteAttempts {
                        empresa_id,
                        ids: ids.clone(),
                    }
                    .execute(conn)?;
                    let purged = DeleteDeliveries { ids, empresa_id }.execute(conn)?;
                    events.sort_unstable();
                    events.dedup();
                    LockEvents {
                        ids: events.clone(),
                        empresa_id,
                    }
                    .execute(conn)?;
                    DeleteReleasedEvents {
                        ids: events,
                        empresa_id,
                    }
                    .execute(conn)?;
                    Ok(purged)
                })
            },
        )
    }

    /// Per company: `PurgeEvents`.
    fn purge_webhook_events(&self, before: DateTime<Utc>, limit: u32) -> Result<u32, RepoError> {
        each_company(
            &self.pool,
            limit,
            "purging old webhook events",
            |conn, limit| CompaniesWithOldEvents { before, limit }.load(conn),
            |conn, empresa_id, limit| {
                PurgeEvents {
                    empresa_id,
                    before,
                    limit,
                }
                .execute(conn)
            },
        )
    }

    /// Per company: `BlankCancelled`.
    fn blank_cancelled_creations(
        &self,
        before: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<u32, RepoError> {
        each_company(
            &self.pool,
            limit,
            "blanking the personal data of cancelled creations",
            |conn, limit| CompaniesWithOldCancelled { before, limit }.load(conn),
            |conn, empresa_id, limit| {
                BlankCancelled {
                    empresa_id,
                    before,
                    now,
                    limit,
                }
                .execute(conn)
            },
        )
    }

    /// Per company: `PurgeAccesses`.
    fn purge_access_log(&self, before: DateTime<Utc>, limit: u32) -> Result<u32, RepoError> {
        each_company(
            &self.pool,
            limit,
            "purging old records of reads of personal data",
            |conn, limit| CompaniesWithOldAccesses { before, limit }.load(conn),
            |conn, empresa_id, limit| {
                PurgeAccesses {
                    empresa_id,
                    before,
                    limit,
                }
                .execute(conn)
            },
        )
    }
}
