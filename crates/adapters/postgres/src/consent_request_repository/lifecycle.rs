//! Status changes of confirmed requests: a transition (a revocation, or the PGCC's word) and
//! expiry (the status poller's schedule: `crate::status_check_schedule`). Only non-terminal requests (`pendente`,
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
use crate::models::SolicitacaoConsentimentoRow;
use crate::outbox;
use crate::per_company::companies_with;
use crate::per_company::each_company;
use crate::settled;
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
    /// The change of `expire_due` for one company, in one call of the owner's
    /// `consentimento_expirar` (issue 36; its status literals are `expirado` and `expiracao`,
    /// held against the domain by `tests/consent_request_state_machine.rs`): lock up to `limit` of its
    /// non-terminal requests whose expiry is at or before `now` (`SKIP LOCKED`: rows another
    /// transaction holds are left for the next round), move them to `expirado` at `now`, append
    /// one history entry and one audit-log entry each from the status they had, with cause
    /// `expiracao`, delete their status-check schedule (a lane's requests have its status:
    /// `status_check_schedule.rs`), and return the
    /// updated rows (for their events). The entries are at `transacao`, the transaction's id as
    /// `settled::transaction_id` reads it: on Citus the call runs on the company's worker
    /// (scripts/citus/distribute.sql), whose own id is another count than the log's.
    struct ExpireDue {
        empresa_id: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
        transacao: i64 as BigInt,
    }
    "SELECT * FROM consentimento_expirar($empresa_id, $now, $limit, $transacao)"
}

statement! {
    /// A request that reached a final status leaves the status worker's schedule, in the
    /// change's transaction: a swept request's status is its lane's (`status_check_schedule.rs`).
    struct Unschedule {
        empresa_id: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
    }
    "DELETE FROM verificacoes_status WHERE empresa_id = $empresa_id AND solicitacao_id = $id"
}

statement! {
    /// A status change through the owner's `consentimento_transicionar` (issue 36): refused
    /// unless the state machine allows `de` to `para`; the row moves only from `de`, with its
    /// history entry and its audit-log entry (docs/auditoria.md) at the transaction's id as
    /// `settled::transaction_id` reads it (on Citus the coordinator's: the worker's would be
    /// another count than the log's). The moved row comes back; none when it was not in `de`.
    struct Transition<'a> {
        empresa_id: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        de: &'a str as Text,
        para: &'a str as Text,
        causa: &'a str as Text,
        motivo: Option<&'a str> as Nullable<Text>,
        em: DateTime<Utc> as Timestamptz,
        transacao: i64 as BigInt,
    }
    "SELECT * FROM consentimento_transicionar(
    $empresa_id, $id, $de, $para, $causa, $motivo, $em, $transacao)"
}

/// In one transaction: the move ([`Transition`]: the row, its history and its audit entry) and,
/// only when it changed the row, the event of `to` (if it has one) about the returned row, with
/// its deliveries. The row lock the update takes makes a concurrent identical transition wait, then
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
    let tipo = EventType::for_transition(to);
    with_conn(pool, "changing the status of a consent request", |conn| {
        conn.transaction(|conn| {
            let transacao = settled::transaction_id(conn)?;
            let Some(updated) = Transition {
                empresa_id: empresa.0,
                id,
                de: from.as_str(),
                para: to.as_str(),
                causa: cause.as_str(),
                motivo: motivo.as_ref().map(Reason::as_str),
                em: at,
                transacao,
            }
            .get_result::<SolicitacaoConsentimentoRow>(conn)
            .optional()?
            else {
                return Ok(false);
            };
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
                let transacao = settled::transaction_id(conn)?;
                let expired = ExpireDue {
                    empresa_id,
                    now,
                    limit,
                    transacao,
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
