//! The reads of the log's chain check and the integrity incidents (issue 36; docs/auditoria.md,
//! "A lawful chain" and "Integrity incidents"), for [`crate::PgAuditLogRepository`]. Every
//! statement names its company. The incidents are two columns of `solicitacoes_consentimento`
//! (migration 2026-12-07-003602_add_integrity_incident_to_solicitacoes), written here by plain
//! `UPDATE`s of those columns only; the cut-off is `auditoria_inicio`
//! (2026-12-07-003601_record_auditoria_inicio). Each statement is a fixed [`statement!`]
//! (crate::fixed_sql).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Binary, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::{CompanyId, IntegrityIncidentData, WebhookEvent};
use ports::{AuditEntry, IntegrityIncident, LinkedEntry, LogPosition, RepoError, UnloggedRequest};
use uuid::Uuid;

use crate::audit_log_repository::EntryRow;
use crate::conn::with_conn;
use crate::fixed_sql::statement;
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

statement! {
    /// The company's entries in `(apos, ate]`, each with its request's previous entry: one
    /// probe of the `(empresa_id, solicitacao_id, transacao, posicao)` key each.
    struct LinkedEntries {
        empresa_id: Uuid as SqlUuid,
        apos_transacao: i64 as BigInt,
        apos_posicao: i64 as BigInt,
        ate_transacao: i64 as BigInt,
        ate_posicao: i64 as BigInt,
    }
    "SELECT a.solicitacao_id, a.entrada, a.transacao, a.posicao, p.entrada AS anterior
FROM auditoria_entradas a
LEFT JOIN LATERAL (
    SELECT b.entrada FROM auditoria_entradas b
    WHERE b.empresa_id = a.empresa_id AND b.solicitacao_id = a.solicitacao_id
      AND (b.transacao, b.posicao) < (a.transacao, a.posicao)
    ORDER BY b.transacao DESC, b.posicao DESC LIMIT 1) p ON true
WHERE a.empresa_id = $empresa_id AND (a.transacao, a.posicao) > ($apos_transacao, $apos_posicao)
  AND (a.transacao, a.posicao) <= ($ate_transacao, $ate_posicao)
ORDER BY a.transacao, a.posicao"
}

statement! {
    /// When the log began (no row: before the migration that records it ran).
    struct LogBegan;
    "SELECT desde FROM auditoria_inicio"
}

statement! {
    /// When the company's request `id` was created.
    struct CreatedAt {
        empresa_id: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
    }
    "SELECT id, criado_em FROM solicitacoes_consentimento
WHERE empresa_id = $empresa_id AND id = $id"
}

statement! {
    /// The company's confirmed requests with no entry: each with one probe of the entries'
    /// `(empresa_id, solicitacao_id, ...)` key.
    struct UnloggedRequests {
        empresa_id: Uuid as SqlUuid,
    }
    "SELECT s.id, s.criado_em FROM solicitacoes_consentimento s
WHERE s.empresa_id = $empresa_id AND s.criacao = 'confirmada'
  AND NOT EXISTS (SELECT 1 FROM auditoria_entradas a
                  WHERE a.empresa_id = s.empresa_id AND a.solicitacao_id = s.id)
ORDER BY s.criado_em, s.id"
}

statement! {
    /// The request's last entry.
    struct LastEntry {
        empresa_id: Uuid as SqlUuid,
        solicitacao_id: Uuid as SqlUuid,
    }
    "SELECT solicitacao_id, entrada, transacao, posicao FROM auditoria_entradas
WHERE empresa_id = $empresa_id AND solicitacao_id = $solicitacao_id
ORDER BY transacao DESC, posicao DESC LIMIT 1"
}

statement! {
    /// Records the request's incident at `now`, once, when its first noted "not found" is at
    /// or before `since`: the incident as an [`IncidentRow`].
    struct RecordIncident {
        empresa_id: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
        since: DateTime<Utc> as Timestamptz,
    }
    "UPDATE solicitacoes_consentimento SET incidente_integridade_em = $now
WHERE empresa_id = $empresa_id AND id = $id AND criacao = 'confirmada'
  AND incidente_integridade_em IS NULL AND pgcc_nao_encontrada_em <= $since
RETURNING id, coalesce(pgcc_id, '') AS pgcc_id,
    coalesce(pgcc_nao_encontrada_em, incidente_integridade_em) AS pgcc_nao_encontrada_em,
    incidente_integridade_em"
}

statement! {
    /// Notes the request's first "not found" at `now` (a write only the first time).
    struct NoteNotFound {
        empresa_id: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
    }
    "UPDATE solicitacoes_consentimento SET pgcc_nao_encontrada_em = $now
WHERE empresa_id = $empresa_id AND id = $id AND criacao = 'confirmada'
  AND pgcc_nao_encontrada_em IS NULL"
}

statement! {
    /// Forgets the noted "not found" of the company's requests `ids` that have no incident: a
    /// probe of the key each, a write only for those with one noted.
    struct ForgetNotFound<'a> {
        empresa_id: Uuid as SqlUuid,
        ids: &'a [Uuid] as Array<SqlUuid>,
    }
    "UPDATE solicitacoes_consentimento SET pgcc_nao_encontrada_em = NULL
WHERE empresa_id = $empresa_id AND id = ANY($ids)
  AND pgcc_nao_encontrada_em IS NOT NULL AND incidente_integridade_em IS NULL"
}

statement! {
    /// The incident of the company's request `id`, if it has one.
    struct IncidentOfRequest {
        empresa_id: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
    }
    "SELECT id, coalesce(pgcc_id, '') AS pgcc_id,
    coalesce(pgcc_nao_encontrada_em, incidente_integridade_em) AS pgcc_nao_encontrada_em,
    incidente_integridade_em
FROM solicitacoes_consentimento
WHERE empresa_id = $empresa_id AND id = $id AND incidente_integridade_em IS NOT NULL"
}

statement! {
    /// Every incident of the company, oldest first.
    struct Incidents {
        empresa_id: Uuid as SqlUuid,
    }
    "SELECT id, coalesce(pgcc_id, '') AS pgcc_id,
    coalesce(pgcc_nao_encontrada_em, incidente_integridade_em) AS pgcc_nao_encontrada_em,
    incidente_integridade_em
FROM solicitacoes_consentimento
WHERE empresa_id = $empresa_id AND incidente_integridade_em IS NOT NULL
ORDER BY incidente_integridade_em, id"
}

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
            LinkedEntries {
                empresa_id: company.0,
                apos_transacao: after.transaction,
                apos_posicao: after.sequence,
                ate_transacao: up_to.transaction,
                ate_posicao: up_to.sequence,
            }
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
    let rows: Vec<BeganRow> = LogBegan.load(conn)?;
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
        let rows: Vec<CreatedRow> = CreatedAt {
            empresa_id: company.0,
            id: request,
        }
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
        let rows: Vec<CreatedRow> = UnloggedRequests {
            empresa_id: company.0,
        }
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
        LastEntry {
            empresa_id: company.0,
            solicitacao_id: request,
        }
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
            let recorded: Vec<IncidentRow> = RecordIncident {
                empresa_id: company.0,
                id: request,
                now,
                since,
            }
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
            NoteNotFound {
                empresa_id: company.0,
                id: request,
                now,
            }
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
        ForgetNotFound {
            empresa_id: company.0,
            ids: requests,
        }
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
        Some(id) => IncidentOfRequest {
            empresa_id: company.0,
            id,
        }
        .load::<IncidentRow>(conn),
        None => Incidents {
            empresa_id: company.0,
        }
        .load::<IncidentRow>(conn),
    })?;
    Ok(rows.into_iter().map(IntegrityIncident::from).collect())
}
