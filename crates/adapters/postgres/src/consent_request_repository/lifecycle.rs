//! Status changes of confirmed requests: a transition (a revocation, or the PGCC's word), the
//! end of an unknown-status oddity, and expiry (the status poller's schedule: `status_checks.rs`). Only non-terminal requests (`pendente`,
//! `ativo`) are claimed or expired; the literals below say so, and
//! `tests/consent_request_state_machine.rs` holds them against the domain's state machine.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::{CompanyId, ConsentStatus, EventType, Reason, TransitionCause, WebhookEvent};
use ports::RepoError;
use uuid::Uuid;

use super::into_domain_in_tx;
use crate::conn::with_conn;
use crate::fixed_sql::statement;
use crate::models::{NewSolicitacaoHistorico, SolicitacaoConsentimentoRow, CRIACAO_CONFIRMADA};
use crate::outbox;
use crate::per_company::companies_with;
use crate::per_company::each_company;
use crate::schema::{solicitacoes_consentimento as sc, solicitacoes_historico as sh};
use crate::settled;
use crate::tenant::Tenant;
use crate::PgPool;

statement! {
    /// Companies (in id order) with a request whose expiry is at or before `now`: one probe of
    /// `solicitacoes_consentimento_empresa_expiracao_idx` per company, never the due rows.
    struct CompaniesWithDueExpiry {
        now: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    companies_with!(
        "SELECT 1 FROM solicitacoes_consentimento s
    WHERE s.empresa_id = e.empresa_id AND s.status IN ('pendente', 'ativo')
      AND s.criacao = 'confirmada' AND s.data_expiracao_consentimento <= $now"
    )
}

statement! {
    /// The change of `expire_due` for one company, in one statement: lock up to `limit` of its
    /// non-terminal requests whose expiry is at or before `now` (`SKIP LOCKED`: rows another
    /// transaction holds are left for the next round), move them to `expirado` at `now`, append
    /// one history entry and one audit-log entry each from the status they had, with cause
    /// `expiracao`, delete their status-check schedule (a lane's requests have its status:
    /// `status_checks.rs`), and return the
    /// updated rows (for their events).
    struct ExpireDue<'a> {
        empresa_id: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
        expirado: &'a str as Text,
        expiracao: &'a str as Text,
    }
    "WITH vencidas AS (
    SELECT id, status FROM solicitacoes_consentimento
    WHERE empresa_id = $empresa_id AND status IN ('pendente', 'ativo')
      AND data_expiracao_consentimento <= $now AND criacao = 'confirmada'
    ORDER BY data_expiracao_consentimento
    LIMIT $limit
    FOR UPDATE SKIP LOCKED
), expiradas AS (
    UPDATE solicitacoes_consentimento s
    SET status = $expirado, atualizado_em = $now
    FROM vencidas v
    WHERE s.empresa_id = $empresa_id AND s.id = v.id
    RETURNING s.*, v.status AS de
), historico AS (
    INSERT INTO solicitacoes_historico (empresa_id, solicitacao_id, de, para, em, causa)
    SELECT empresa_id, id, de, $expirado, $now, $expiracao FROM expiradas
), auditada AS (
    INSERT INTO auditoria_entradas (empresa_id, solicitacao_id, entrada)
    SELECT x.empresa_id, x.id, auditoria_entrada(
        x.id, x.pgcc_id, e.cnpj, x.caso_de_uso_id_template, x.de, x.status, $expiracao, NULL,
        x.prova_coleta, x.hash, $now)
    FROM expiradas x JOIN empresas e ON e.id = x.empresa_id
    WHERE current_setting('consent_api.auditoria', true) IS DISTINCT FROM 'off'
), desagendadas AS (
    DELETE FROM verificacoes_status v USING expiradas x
    WHERE v.empresa_id = $empresa_id AND v.solicitacao_id = x.id
)
SELECT * FROM expiradas"
}

statement! {
    /// A request that reached a final status leaves the status worker's schedule, in the
    /// change's transaction: a swept request's status is its lane's (`status_checks.rs`).
    struct Unschedule {
        empresa_id: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
    }
    "DELETE FROM verificacoes_status WHERE empresa_id = $empresa_id AND solicitacao_id = $id"
}

statement! {
    /// The audit-log entry of a status change (docs/auditoria.md), from the row as the change
    /// left it, in the change's transaction, at the transaction's id as `settled::transaction_id`
    /// reads it: on Citus this `INSERT ... SELECT` runs its `SELECT` on the worker, where the
    /// column default would be the worker's id, another count than the log's.
    struct AppendTransition<'a> {
        empresa_id: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        de: &'a str as Text,
        causa: &'a str as Text,
        motivo: Option<&'a str> as Nullable<Text>,
        em: DateTime<Utc> as Timestamptz,
        transacao: i64 as BigInt,
    }
    "INSERT INTO auditoria_entradas (empresa_id, solicitacao_id, entrada, transacao)
SELECT s.empresa_id, s.id, auditoria_entrada(
    s.id, s.pgcc_id, e.cnpj, s.caso_de_uso_id_template, $de, s.status, $causa, $motivo,
    s.prova_coleta, s.hash, $em), $transacao
FROM solicitacoes_consentimento s JOIN empresas e ON e.id = s.empresa_id
WHERE s.empresa_id = $empresa_id AND s.id = $id
  AND current_setting('consent_api.auditoria', true) IS DISTINCT FROM 'off'"
}

/// In one transaction: `UPDATE ... SET status = $to, atualizado_em = $at WHERE id = $id AND
/// empresa_id = $empresa AND status = $from RETURNING *` and, only when it changed the row, the
/// history entry, the audit-log entry ([`AppendTransition`]) and the event of `to` (if it has one) about the returned row, with its
/// deliveries. The row lock the update takes makes a concurrent identical transition wait, then
/// find the status changed and answer `false` (writing nothing).
/// One status change as [`transition`] applies it (the port method's arguments).
pub(super) struct Change {
    pub empresa: CompanyId,
    pub id: Uuid,
    pub from: ConsentStatus,
    pub to: ConsentStatus,
    pub cause: TransitionCause,
    /// The reason given, kept in the history entry and the event.
    pub motivo: Option<Reason>,
    pub at: DateTime<Utc>,
}

pub(super) fn transition(pool: &PgPool, change: Change) -> Result<bool, RepoError> {
    let Change {
        empresa,
        id,
        from,
        to,
        cause,
        motivo,
        at,
    } = change;
    let entry = NewSolicitacaoHistorico::new(empresa.0, id, Some(from), to, at, cause)
        .with_reason(motivo.as_ref());
    let tipo = EventType::for_transition(to);
    with_conn(pool, "changing the status of a consent request", |conn| {
        conn.transaction(|conn| {
            let Some(updated) = diesel::update(
                sc::table::row(empresa, id)
                    .filter(sc::criacao.eq(CRIACAO_CONFIRMADA))
                    .filter(sc::status.eq(from.as_str())),
            )
            .set((sc::status.eq(to.as_str()), sc::atualizado_em.eq(at)))
            .returning(SolicitacaoConsentimentoRow::as_returning())
            .get_result(conn)
            .optional()?
            else {
                return Ok(false);
            };
            diesel::insert_into(sh::table)
                .values(&entry)
                .execute(conn)?;
            AppendTransition {
                empresa_id: empresa.0,
                id,
                de: from.as_str(),
                causa: cause.as_str(),
                motivo: motivo.as_ref().map(Reason::as_str),
                em: at,
                transacao: settled::transaction_id(conn)?,
            }
            .execute(conn)?;
            if to.is_terminal() {
                Unschedule {
                    empresa_id: empresa.0,
                    id,
                }
                .execute(conn)?;
            }
            if let Some(tipo) = tipo {
                let request = into_domain_in_tx(updated)?;
                let event = WebhookEvent::consent(tipo, &request, at).with_reason(motivo.clone());
                outbox::write_event(conn, &event)?;
            }
            Ok(true)
        })
    })
}

pub(super) fn clear_unknown_status(
    pool: &PgPool,
    empresa: CompanyId,
    id: Uuid,
) -> Result<(), RepoError> {
    with_conn(
        pool,
        "forgetting an unknown status of a consent request",
        |conn| {
            diesel::update(
                sc::table::row(empresa, id).filter(sc::status_desconhecido_desde.is_not_null()),
            )
            .set(sc::status_desconhecido_desde.eq(None::<DateTime<Utc>>))
            .execute(conn)
        },
    )?;
    Ok(())
}

/// In one transaction, two statements whatever the batch size: [`ExpireDue`] (lock, move,
/// history, returning the moved rows), then one `solicitacao.expirada` event per moved request,
/// with its deliveries (one batch of the outbox). The count is the number of rows moved.
pub(super) fn expire_due(pool: &PgPool, now: DateTime<Utc>, limit: u32) -> Result<u32, RepoError> {
    // Every statement below is scoped to one company (issue 21, part 3): a transaction per
    // company, each at most what is left of `limit`.
    each_company(
        pool,
        limit,
        "expiring consent requests",
        |conn, limit| CompaniesWithDueExpiry { now, limit }.load(conn),
        |conn, empresa_id, limit| {
            conn.transaction(|conn| {
                let expired = ExpireDue {
                    empresa_id,
                    now,
                    limit,
                    expirado: ConsentStatus::Expired.as_str(),
                    expiracao: TransitionCause::Expiry.as_str(),
                }
                .load::<SolicitacaoConsentimentoRow>(conn)?;
                let events = expired
                    .into_iter()
                    .map(|row| {
                        let request = into_domain_in_tx(row)?;
                        Ok(WebhookEvent::consent(
                            EventType::RequestExpired,
                            &request,
                            now,
                        ))
                    })
                    .collect::<QueryResult<Vec<_>>>()?;
                outbox::write_events(conn, &events)?;
                Ok(events.len())
            })
        },
    )
}
