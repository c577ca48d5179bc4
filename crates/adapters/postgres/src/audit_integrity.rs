//! The reads of the log's chain check and the integrity incidents (issue 36; docs/auditoria.md,
//! "A lawful chain" and "Integrity incidents"), for [`crate::PgAuditLogRepository`]. Every
//! statement names its company. The incidents are two columns of `solicitacoes_consentimento`
//! (migration 2026-12-07-003602_add_integrity_incident_to_solicitacoes), written here by plain
//! `UPDATE`s of those columns only; the cut-off is `auditoria_inicio`
//! (2026-12-07-003601_record_auditoria_inicio).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_query;
use diesel::sql_types::{Array, BigInt, Binary, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::{CompanyId, IntegrityIncidentData, WebhookEvent};
use ports::{AuditEntry, IntegrityIncident, LinkedEntry, LogPosition, RepoError, UnloggedRequest};
use uuid::Uuid;

use crate::audit_log_repository::EntryRow;
use crate::conn::with_conn;
use crate::outbox;
use crate::PgPool;

#[derive(QueryableByName)]
struct LinkedRow {
    #[diesel(sql_type = SqlUuid)]
    solicitacao_id: Uuid,
    #[diesel(sql_type = Binary)]
    entrada: Vec<u8>,
    #[diesel(sql_type = BigInt)]
    transacao: i64,
    #[diesel(sql_type = BigInt)]
    posicao: i64,
    #[diesel(sql_type = Nullable<Binary>)]
    anterior: Option<Vec<u8>>,
}

#[derive(QueryableByName)]
struct BeganRow {
    #[diesel(sql_type = Timestamptz)]
    desde: DateTime<Utc>,
}

#[derive(QueryableByName)]
struct CreatedRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Timestamptz)]
    criado_em: DateTime<Utc>,
}

#[derive(QueryableByName)]
struct IncidentRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    pgcc_id: String,
    #[diesel(sql_type = Timestamptz)]
    pgcc_nao_encontrada_em: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    incidente_integridade_em: DateTime<Utc>,
}

impl From<IncidentRow> for IntegrityIncident {
    fn from(row: IncidentRow) -> Self {
        IntegrityIncident {
            request: row.id,
            pgcc_id: row.pgcc_id,
            not_found_since: row.pgcc_nao_encontrada_em,
            recorded_at: row.incidente_integridade_em,
        }
    }
}

const INCIDENT_COLUMNS: &str =
    "id, coalesce(pgcc_id, '') AS pgcc_id, coalesce(pgcc_nao_encontrada_em, incidente_integridade_em) AS pgcc_nao_encontrada_em, incidente_integridade_em";

/// The entries in `(after, up_to]`, each with its request's previous entry: one probe of the
/// `(empresa_id, solicitacao_id, transacao, posicao)` key each.
pub(crate) fn linked_entries(
    pool: &PgPool,
    company: CompanyId,
    after: Option<LogPosition>,
    up_to: LogPosition,
) -> Result<Vec<LinkedEntry>, RepoError> {
    let after = after.unwrap_or(LogPosition {
        transaction: 0,
        sequence: 0,
    });
    let rows = with_conn(
        pool,
        "reading audit entries with their previous ones",
        |conn| {
            sql_query(
                "SELECT a.solicitacao_id, a.entrada, a.transacao, a.posicao, p.entrada AS anterior
FROM auditoria_entradas a
LEFT JOIN LATERAL (
    SELECT b.entrada FROM auditoria_entradas b
    WHERE b.empresa_id = a.empresa_id AND b.solicitacao_id = a.solicitacao_id
      AND (b.transacao, b.posicao) < (a.transacao, a.posicao)
    ORDER BY b.transacao DESC, b.posicao DESC LIMIT 1) p ON true
WHERE a.empresa_id = $1 AND (a.transacao, a.posicao) > ($2, $3)
  AND (a.transacao, a.posicao) <= ($4, $5)
ORDER BY a.transacao, a.posicao",
            )
            .bind::<SqlUuid, _>(company.0)
            .bind::<BigInt, _>(after.transaction)
            .bind::<BigInt, _>(after.sequence)
            .bind::<BigInt, _>(up_to.transaction)
            .bind::<BigInt, _>(up_to.sequence)
            .load::<LinkedRow>(conn)
        },
    )?;
    Ok(rows
        .into_iter()
        .map(|row| LinkedEntry {
            entry: AuditEntry {
                request_id: row.solicitacao_id,
                bytes: row.entrada,
                position: LogPosition {
                    transaction: row.transacao,
                    sequence: row.posicao,
                },
            },
            previous: row.anterior,
        })
        .collect())
}

fn began(conn: &mut PgConnection) -> QueryResult<Option<DateTime<Utc>>> {
    let rows: Vec<BeganRow> = sql_query("SELECT desde FROM auditoria_inicio").load(conn)?;
    Ok(rows.into_iter().next().map(|r| r.desde))
}

pub(crate) fn log_began(pool: &PgPool) -> Result<Option<DateTime<Utc>>, RepoError> {
    with_conn(pool, "reading when the audit log began", began)
}

pub(crate) fn created_before_log(
    pool: &PgPool,
    company: CompanyId,
    request: Uuid,
) -> Result<bool, RepoError> {
    with_conn(pool, "reading when a request was created", |conn| {
        let Some(began) = began(conn)? else {
            return Ok(false);
        };
        let rows: Vec<CreatedRow> = sql_query(
            "SELECT id, criado_em FROM solicitacoes_consentimento
WHERE empresa_id = $1 AND id = $2",
        )
        .bind::<SqlUuid, _>(company.0)
        .bind::<SqlUuid, _>(request)
        .load(conn)?;
        Ok(rows.first().is_some_and(|r| r.criado_em < began))
    })
}

/// The company's confirmed requests with no entry: its requests, each with one probe of the
/// entries' `(empresa_id, solicitacao_id, ...)` key (`audit verify`, linear like the rest of it).
pub(crate) fn unlogged_requests(
    pool: &PgPool,
    company: CompanyId,
) -> Result<Vec<UnloggedRequest>, RepoError> {
    let (began, rows) = with_conn(pool, "finding requests with no audit entry", |conn| {
        let began = began(conn)?;
        let rows: Vec<CreatedRow> = sql_query(
            "SELECT s.id, s.criado_em FROM solicitacoes_consentimento s
WHERE s.empresa_id = $1 AND s.criacao = 'confirmada'
  AND NOT EXISTS (SELECT 1 FROM auditoria_entradas a
                  WHERE a.empresa_id = s.empresa_id AND a.solicitacao_id = s.id)
ORDER BY s.criado_em, s.id",
        )
        .bind::<SqlUuid, _>(company.0)
        .load(conn)?;
        Ok((began, rows))
    })?;
    Ok(rows
        .into_iter()
        .map(|row| UnloggedRequest {
            id: row.id,
            created_at: row.criado_em,
            before_log: began.is_some_and(|began| row.criado_em < began),
        })
        .collect())
}

pub(crate) fn last_entry(
    pool: &PgPool,
    company: CompanyId,
    request: Uuid,
) -> Result<Option<AuditEntry>, RepoError> {
    let rows = with_conn(pool, "reading a request's last audit entry", |conn| {
        sql_query(
            "SELECT solicitacao_id, entrada, transacao, posicao FROM auditoria_entradas
WHERE empresa_id = $1 AND solicitacao_id = $2
ORDER BY transacao DESC, posicao DESC LIMIT 1",
        )
        .bind::<SqlUuid, _>(company.0)
        .bind::<SqlUuid, _>(request)
        .load::<EntryRow>(conn)
    })?;
    Ok(rows.into_iter().next().map(AuditEntry::from))
}

/// In one transaction: the incident, when the first noted "not found" is at least `window` old
/// (recorded once, with its event); else the first "not found" noted (a write only the first
/// time).
pub(crate) fn note_pgcc_not_found(
    pool: &PgPool,
    company: CompanyId,
    request: Uuid,
    now: DateTime<Utc>,
    window: chrono::Duration,
) -> Result<Option<IntegrityIncident>, RepoError> {
    let since = now.checked_sub_signed(window).unwrap_or(now);
    with_conn(pool, "noting a request the PGCC does not know", |conn| {
        conn.transaction(|conn| {
            let recorded: Vec<IncidentRow> = sql_query(format!(
                "UPDATE solicitacoes_consentimento SET incidente_integridade_em = $3
WHERE empresa_id = $1 AND id = $2 AND criacao = 'confirmada'
  AND incidente_integridade_em IS NULL AND pgcc_nao_encontrada_em <= $4
RETURNING {INCIDENT_COLUMNS}"
            ))
            .bind::<SqlUuid, _>(company.0)
            .bind::<SqlUuid, _>(request)
            .bind::<Timestamptz, _>(now)
            .bind::<Timestamptz, _>(since)
            .load(conn)?;
            if let Some(row) = recorded.into_iter().next() {
                let incident = IntegrityIncident::from(row);
                outbox::write_event(
                    conn,
                    &WebhookEvent::integrity_incident(
                        company,
                        IntegrityIncidentData {
                            request_id: incident.request,
                            pgcc_id: incident.pgcc_id.clone(),
                            not_found_since: incident.not_found_since,
                            recorded_at: incident.recorded_at,
                        },
                    ),
                )?;
                return Ok(Some(incident));
            }
            sql_query(
                "UPDATE solicitacoes_consentimento SET pgcc_nao_encontrada_em = $3
WHERE empresa_id = $1 AND id = $2 AND criacao = 'confirmada'
  AND pgcc_nao_encontrada_em IS NULL",
            )
            .bind::<SqlUuid, _>(company.0)
            .bind::<SqlUuid, _>(request)
            .bind::<Timestamptz, _>(now)
            .execute(conn)?;
            Ok(None)
        })
    })
}

/// One statement for the company's requests the PGCC answered this round: a probe of the key
/// each, a write only for those with a noted "not found" and no incident.
pub(crate) fn forget_pgcc_not_found(
    pool: &PgPool,
    company: CompanyId,
    requests: &[Uuid],
) -> Result<(), RepoError> {
    if requests.is_empty() {
        return Ok(());
    }
    with_conn(pool, "forgetting the PGCC's not found", |conn| {
        sql_query(
            "UPDATE solicitacoes_consentimento SET pgcc_nao_encontrada_em = NULL
WHERE empresa_id = $1 AND id = ANY($2)
  AND pgcc_nao_encontrada_em IS NOT NULL AND incidente_integridade_em IS NULL",
        )
        .bind::<SqlUuid, _>(company.0)
        .bind::<Array<SqlUuid>, _>(requests)
        .execute(conn)
    })?;
    Ok(())
}

pub(crate) fn integrity_incidents(
    pool: &PgPool,
    company: CompanyId,
    request: Option<Uuid>,
) -> Result<Vec<IntegrityIncident>, RepoError> {
    let rows = with_conn(pool, "reading integrity incidents", |conn| match request {
        Some(id) => sql_query(format!(
            "SELECT {INCIDENT_COLUMNS} FROM solicitacoes_consentimento
WHERE empresa_id = $1 AND id = $2 AND incidente_integridade_em IS NOT NULL"
        ))
        .bind::<SqlUuid, _>(company.0)
        .bind::<SqlUuid, _>(id)
        .load::<IncidentRow>(conn),
        None => sql_query(format!(
            "SELECT {INCIDENT_COLUMNS} FROM solicitacoes_consentimento
WHERE empresa_id = $1 AND incidente_integridade_em IS NOT NULL
ORDER BY incidente_integridade_em, id"
        ))
        .bind::<SqlUuid, _>(company.0)
        .load::<IncidentRow>(conn),
    })?;
    Ok(rows.into_iter().map(IntegrityIncident::from).collect())
}
