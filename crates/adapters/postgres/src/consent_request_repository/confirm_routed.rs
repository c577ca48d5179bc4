//! `confirm_creation` on Citus: the writes of [`super::creation`]'s `ConfirmCreation`, one
//! statement each, in one transaction.
//!
//! Citus plans a statement whose CTEs insert as subplans ("only SELECT, UPDATE, or DELETE common
//! table expressions may be router planned"), each result shipped between the coordinator and a
//! worker: 50-70 ms a confirmation and about 40 ms of PostgreSQL CPU (`make bench` with
//! `BENCH_CITUS=1`). Each statement here names the request's company, so Citus routes each to the
//! company's shard, and the transaction, written on one worker, commits without two-phase commit.
//! On one node the single statement stays: one round trip instead of eight.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Nullable, Text, Timestamptz, Uuid as SqlUuid};
use uuid::Uuid;

use super::creation::{confirmation_writes, ConfirmCreation};
use crate::fixed_sql::statement;
use crate::outbox::deliveries_of_eventos;
use crate::settled;

/// The confirmed request, read from the table by id and company.
macro_rules! the_request {
    () => {
        "c.id = $id AND c.empresa_id = $empresa_id AND "
    };
}

statement! {
    /// The owner's `consentimento_confirmar` (the row, its history and its audit entry), at the
    /// coordinator's transaction id (`TRANSACTION`): a function Citus runs on the coordinator,
    /// each of its statements routed to the company's shard. 1 when it confirmed the row.
    struct Confirm<'a> {
        id: Uuid as SqlUuid,
        empresa_id: Uuid as SqlUuid,
        pgcc_id: &'a str as Text,
        next_check_at: DateTime<Utc> as Timestamptz,
        hash: &'a str as Text,
        status: &'static str as Text,
        atualizado_em: DateTime<Utc> as Timestamptz,
        transacao: i64 as diesel::sql_types::BigInt,
    }
    "SELECT 1 FROM consentimento_confirmar(
    $id, $empresa_id, $pgcc_id, $next_check_at, $hash, $status, $atualizado_em, $transacao)"
}

statement! {
    /// The confirmed request's first status check.
    struct Schedule {
        id: Uuid as SqlUuid,
        empresa_id: Uuid as SqlUuid,
        next_check_at: DateTime<Utc> as Timestamptz,
    }
    confirmation_writes!(schedule, "solicitacoes_consentimento", the_request!())
}

statement! {
    /// The `solicitacao.criada` event, from values (Citus plans it as a `SELECT` from the
    /// request on every shard), not yet marked: [`MarkWithoutDeliveries`] marks it once its
    /// deliveries are written, from what was written (two statements read the URLs in two
    /// snapshots, so the mark is not read from them).
    struct Event {
        empresa_id: Uuid as SqlUuid,
        event_id: Uuid as SqlUuid,
        event_tipo: &'static str as Text,
        event_payload: String as Text,
        event_at: DateTime<Utc> as Timestamptz,
        event_traceparent: Option<String> as Nullable<Text>,
    }
    "INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em, traceparent,
                             sem_entregas)
VALUES ($event_id, $empresa_id, $event_tipo, $event_payload, $event_at, $event_traceparent, false)"
}

statement! {
    /// The event's deliveries: one per URL of the company that takes it.
    struct Deliveries {
        event_id: Uuid as SqlUuid,
        empresa_id: Uuid as SqlUuid,
    }
    deliveries_of_eventos!(stored "$event_id", "$empresa_id")
}

statement! {
    /// The event's mark when no URL took it (the event purge reads only marked events).
    struct MarkWithoutDeliveries {
        event_id: Uuid as SqlUuid,
        empresa_id: Uuid as SqlUuid,
    }
    "UPDATE webhook_eventos SET sem_entregas = true WHERE id = $event_id AND empresa_id = $empresa_id"
}

/// `statement`'s writes, one statement each in one transaction; the count as `ConfirmCreation`'s: 1 when it confirmed, 0 when the row was not
/// that unconfirmed request (nothing written then).
pub(super) fn confirm(
    conn: &mut PgConnection,
    statement: ConfirmCreation<'_>,
) -> QueryResult<usize> {
    conn.transaction(|conn| {
        let (id, empresa_id) = (statement.id, statement.empresa_id);
        let transacao = settled::transaction_id(conn)?;
        let confirmed = Confirm {
            id,
            empresa_id,
            pgcc_id: statement.pgcc_id,
            next_check_at: statement.next_check_at,
            hash: statement.hash,
            status: statement.status,
            atualizado_em: statement.atualizado_em,
            transacao,
        }
        .execute(conn)?;
        if confirmed == 0 {
            return Ok(0);
        }
        Schedule {
            id,
            empresa_id,
            next_check_at: statement.next_check_at,
        }
        .execute(conn)?;
        let event_id = statement.event_id;
        Event {
            empresa_id,
            event_id,
            event_tipo: statement.event_tipo,
            event_payload: statement.event_payload,
            event_at: statement.event_at,
            event_traceparent: statement.event_traceparent,
        }
        .execute(conn)?;
        if (Deliveries {
            event_id,
            empresa_id,
        })
        .execute(conn)?
            == 0
        {
            MarkWithoutDeliveries {
                event_id,
                empresa_id,
            }
            .execute(conn)?;
        }
        Ok(confirmed)
    })
}
