//! The status worker's schedule (`verificacoes_status`): which companies have due checks, the
//! claim of one company's due checks, the schedule written after a check, and the backoff of a
//! request the PGCC answers an odd status for. Every statement but the first is scoped to one
//! company; none writes the consent row except the backoff's record of when the oddity began.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::{CompanyId, ConsentStatus};
use ports::{RepoError, StatusCheckItem, StatusCheckSchedule};
use uuid::Uuid;

use super::{sql_limit, CompanyIdRow};
use crate::conn::with_conn;
use crate::fixed_sql::statement;
use crate::schema::solicitacoes_consentimento as sc;
use crate::PgPool;

statement! {
    /// Companies (in id order, after `after`) with a check due at `now`: for each company, one
    /// probe of `verificacoes_status_devidas_idx` for its oldest due check. The cost follows the
    /// number of companies, never the number of due checks. `empresas` is one of the two tables
    /// read across companies.
    struct CompaniesWithDueChecks {
        now: DateTime<Utc> as Timestamptz,
        after: Uuid as SqlUuid,
        limit: i64 as BigInt,
    }
    "SELECT e.id FROM empresas e
WHERE e.id > $after
  AND EXISTS (
    SELECT 1 FROM verificacoes_status v WHERE v.empresa_id = e.id AND v.proxima_em <= $now
  )
ORDER BY e.id
LIMIT $limit"
}

statement! {
    /// One company's due checks, oldest due first, locked (`SKIP LOCKED`: another worker's
    /// claim is left to it) and moved to the end of their lease; each with its request's status
    /// and PGCC id as stored, and when it was due.
    struct ClaimStatusChecks {
        empresa_id: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
        lease_until: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    "WITH devidas AS (
    SELECT v.solicitacao_id, v.proxima_em
    FROM verificacoes_status v
    WHERE v.empresa_id = $empresa_id AND v.proxima_em <= $now
    ORDER BY v.proxima_em
    LIMIT $limit
    FOR UPDATE SKIP LOCKED
), reivindicadas AS (
    UPDATE verificacoes_status v SET proxima_em = $lease_until
    FROM devidas d
    WHERE v.empresa_id = $empresa_id AND v.solicitacao_id = d.solicitacao_id
    RETURNING v.solicitacao_id, d.proxima_em AS devida_em, v.intervalo_segundos
)
SELECT s.id, s.pgcc_id, s.status, s.status_desconhecido_desde, r.devida_em, r.intervalo_segundos
FROM reivindicadas r
JOIN solicitacoes_consentimento s ON s.id = r.solicitacao_id AND s.empresa_id = $empresa_id"
}

statement! {
    /// The schedule after a check, for one company: each listed request's next check and
    /// interval, or its row deleted (`proxima_em` NULL: it reached a final status).
    struct ScheduleStatusChecks {
        empresa_id: Uuid as SqlUuid,
        ids: Vec<Uuid> as Array<SqlUuid>,
        next: Vec<Option<DateTime<Utc>>> as Array<Nullable<Timestamptz>>,
        intervals: Vec<i64> as Array<BigInt>,
    }
    "WITH agenda AS (
    SELECT * FROM unnest($ids::uuid[], $next::timestamptz[], $intervals::bigint[])
        AS a(solicitacao_id, proxima_em, intervalo_segundos)
), encerradas AS (
    DELETE FROM verificacoes_status v USING agenda a
    WHERE v.empresa_id = $empresa_id AND v.solicitacao_id = a.solicitacao_id
      AND a.proxima_em IS NULL
)
UPDATE verificacoes_status v
SET proxima_em = a.proxima_em, intervalo_segundos = a.intervalo_segundos
FROM agenda a
WHERE v.empresa_id = $empresa_id AND v.solicitacao_id = a.solicitacao_id
  AND a.proxima_em IS NOT NULL"
}

statement! {
    /// The backoff of a request whose status the PGCC answered we do not know: its next check.
    struct DeferStatusCheck {
        empresa_id: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        next_check_at: DateTime<Utc> as Timestamptz,
    }
    "UPDATE verificacoes_status SET proxima_em = $next_check_at
WHERE empresa_id = $empresa_id AND solicitacao_id = $id"
}

#[derive(QueryableByName)]
struct ClaimedRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Nullable<Text>)]
    pgcc_id: Option<String>,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    status_desconhecido_desde: Option<DateTime<Utc>>,
    #[diesel(sql_type = Timestamptz)]
    devida_em: DateTime<Utc>,
    #[diesel(sql_type = BigInt)]
    intervalo_segundos: i64,
}

impl ClaimedRow {
    fn into_domain(self, company: CompanyId) -> anyhow::Result<StatusCheckItem> {
        let status = ConsentStatus::parse(&self.status)
            .ok_or_else(|| anyhow::anyhow!("a claimed consent request has an unknown status"))?;
        Ok(StatusCheckItem {
            id: self.id,
            company_id: company,
            // only confirmed requests are scheduled: a PGCC id is always there
            pgcc_id: self.pgcc_id.unwrap_or_default(),
            status,
            unknown_status_since: self.status_desconhecido_desde,
            due_at: self.devida_em,
            interval_seconds: u32::try_from(self.intervalo_segundos).unwrap_or(0),
        })
    }
}

pub(super) fn companies_with_due(
    pool: &PgPool,
    now: DateTime<Utc>,
    after: Option<CompanyId>,
    limit: u32,
) -> Result<Vec<CompanyId>, RepoError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let rows = with_conn(pool, "finding companies with due status checks", |conn| {
        CompaniesWithDueChecks {
            now,
            // the nil id sorts before every other
            after: after.map_or(Uuid::nil(), |c| c.0),
            limit: sql_limit(limit),
        }
        .load::<CompanyIdRow>(conn)
    })?;
    Ok(rows.into_iter().map(|r| CompanyId(r.id)).collect())
}

pub(super) fn claim(
    pool: &PgPool,
    company: CompanyId,
    limit: u32,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
) -> Result<Vec<StatusCheckItem>, RepoError> {
    const OPERATION: &str = "claiming status checks";
    if limit == 0 {
        return Ok(Vec::new());
    }
    let rows = with_conn(pool, OPERATION, |conn| {
        ClaimStatusChecks {
            empresa_id: company.0,
            now,
            lease_until,
            limit: sql_limit(limit),
        }
        .load::<ClaimedRow>(conn)
    })?;
    rows.into_iter()
        .map(|row| row.into_domain(company))
        .collect::<anyhow::Result<_>>()
        .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))
}

/// One statement per company of `schedules`.
pub(super) fn schedule(pool: &PgPool, schedules: &[StatusCheckSchedule]) -> Result<(), RepoError> {
    let mut by_company: BTreeMap<CompanyId, ScheduleStatusChecks> = BTreeMap::new();
    for s in schedules {
        let batch = by_company
            .entry(s.company_id)
            .or_insert_with(|| ScheduleStatusChecks {
                empresa_id: s.company_id.0,
                ids: Vec::new(),
                next: Vec::new(),
                intervals: Vec::new(),
            });
        batch.ids.push(s.id);
        batch.next.push(s.next_at);
        batch.intervals.push(i64::from(s.interval_seconds));
    }
    for batch in by_company.into_values() {
        with_conn(pool, "scheduling status checks", |conn| batch.execute(conn))?;
    }
    Ok(())
}

/// Records when the oddity began on the request (once: the row is written only when it has no
/// such record yet) and moves its next check.
pub(super) fn defer(
    pool: &PgPool,
    empresa: CompanyId,
    id: Uuid,
    unknown_since: DateTime<Utc>,
    next_check_at: DateTime<Utc>,
) -> Result<bool, RepoError> {
    with_conn(
        pool,
        "backing off the status check of a consent request",
        |conn| {
            conn.transaction(|conn| {
                diesel::update(
                    sc::table
                        .filter(sc::id.eq(id))
                        .filter(sc::empresa_id.eq(empresa.0))
                        .filter(sc::status_desconhecido_desde.is_null()),
                )
                .set(sc::status_desconhecido_desde.eq(Some(unknown_since)))
                .execute(conn)?;
                let moved = DeferStatusCheck {
                    empresa_id: empresa.0,
                    id,
                    next_check_at,
                }
                .execute(conn)?;
                Ok(moved == 1)
            })
        },
    )
}
