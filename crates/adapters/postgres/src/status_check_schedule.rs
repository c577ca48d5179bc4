//! [`PgStatusCheckSchedule`]: the status worker's schedule (`verificacoes_status`) and sweeps
//! (`varreduras_status`): which companies have due checks, the claim of one company's due checks
//! (its own scheduled ones first, then a batch of a due sweep), the schedule written after a
//! check, the sweep moved past its batch, and the backoff of a request the PGCC answers an odd
//! status for. Every statement but the first is scoped to one company; none writes the consent
//! row except the record of when an odd status began and ended (`status_desconhecido_desde`).
//!
//! A swept check that finds no change writes nothing: the sweep's own row moves once per batch
//! (up to 500 requests), and the batch is read from the sweep's covering index alone (the
//! request's PGCC id is kept in its schedule row, its status is its lane's), so at 10^7 consents
//! the steady checks cost an index-only range read each and never touch the consent rows
//! (docs/scaling.md, "The status worker").

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Bool, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::{CompanyId, ConsentStatus};
use ports::{
    DueStatusChecks, NextStatusCheck, RepoError, ScheduledStatusCheck, StatusCheckItem,
    StatusCheckSchedule, StatusSweepLane, StatusSweepLease,
};
use uuid::Uuid;

use crate::conn::with_conn;
use crate::fixed_sql::statement;
use crate::schema::solicitacoes_consentimento as sc;
use crate::tenant::Tenant;
use crate::PgPool;

/// [`StatusCheckSchedule`] on `verificacoes_status` and `varreduras_status` (and the request's
/// `status_desconhecido_desde`). The status job gives it a pool of its own (docs/scaling.md).
#[derive(Clone)]
pub struct PgStatusCheckSchedule {
    pool: PgPool,
}

impl PgStatusCheckSchedule {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl StatusCheckSchedule for PgStatusCheckSchedule {
    fn companies_with_due_status_checks(
        &self,
        now: DateTime<Utc>,
        after: Option<CompanyId>,
        limit: u32,
    ) -> Result<Vec<DueStatusChecks>, RepoError> {
        companies_with_due(&self.pool, now, after, limit)
    }

    fn claim_status_checks(
        &self,
        due: DueStatusChecks,
        limit: u32,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> Result<Vec<StatusCheckItem>, RepoError> {
        claim(&self.pool, due, limit, now, lease_until)
    }

    fn schedule_status_checks(&self, schedules: &[ScheduledStatusCheck]) -> Result<(), RepoError> {
        schedule(&self.pool, schedules)
    }

    fn advance_status_sweeps(
        &self,
        leases: &[StatusSweepLease],
        now: DateTime<Utc>,
    ) -> Result<(), RepoError> {
        advance_sweeps(&self.pool, leases, now)
    }

    fn defer_status_check(
        &self,
        company: CompanyId,
        id: Uuid,
        unknown_since: DateTime<Utc>,
        next_check_at: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        defer(&self.pool, company, id, unknown_since, next_check_at)
    }

    fn clear_unknown_status(&self, company: CompanyId, id: Uuid) -> Result<(), RepoError> {
        clear_unknown_status(&self.pool, company, id)
    }
}

/// A limit from the port as SQL's `bigint`.
fn sql_limit(limit: u32) -> i64 {
    i64::from(limit)
}

/// `$at + $seconds` seconds (SQL expressions: a `timestamptz`, a number of seconds or an
/// `interval` of seconds), as IMMUTABLE functions only: the sum taken in UTC, where a second is
/// always a second. `timestamptz + interval` is STABLE (an interval of days depends on the time
/// zone), and Citus refuses a STABLE function over a column in an `UPDATE`, in `CASE` above all
/// ("non-IMMUTABLE functions are not allowed in CASE or COALESCE statements"): every sweep claim
/// failed there. The same instant on one node.
macro_rules! utc_plus {
    ($at:literal, $seconds:literal) => {
        concat!(
            "((",
            $at,
            " AT TIME ZONE 'UTC') + ",
            $seconds,
            ") AT TIME ZONE 'UTC'"
        )
    };
}

statement! {
    /// Companies with a check due at `now`, and which kinds, in id order starting after
    /// `after` and wrapping around: for each company, one probe of
    /// `verificacoes_status_devidas_idx` for its oldest due check and one of its sweeps (a due
    /// pass whose batch is not leased). The cost follows the number of companies, never the
    /// number of due checks; the caller runs it once per lap of the companies, not per call.
    /// The companies are walked through their `agenda_sincronizacao` row, as every "companies
    /// with due work" statement is (`per_company::companies_with`): on Citus it is co-located
    /// with the probed tables, where `empresas` (a reference table) makes the statement
    /// unplannable. `OFFSET 0` keeps the probes in the subquery: pulled up, each would run twice
    /// (in the filter and in the output); on Citus the subquery is one multi-shard subplan.
    struct CompaniesWithDueChecks {
        now: DateTime<Utc> as Timestamptz,
        after: Uuid as SqlUuid,
        limit: i64 as BigInt,
    }
    "SELECT d.id, d.agendadas, d.varridas FROM (
    SELECT e.empresa_id AS id,
      EXISTS (
        SELECT 1 FROM verificacoes_status v
        WHERE v.empresa_id = e.empresa_id AND v.proxima_em <= $now
      ) AS agendadas,
      EXISTS (
        SELECT 1 FROM varreduras_status w
        WHERE w.empresa_id = e.empresa_id AND w.proxima_em <= $now
          AND (w.arrendada_ate IS NULL OR w.arrendada_ate <= $now)
      ) AS varridas
    FROM agenda_sincronizacao e
    OFFSET 0
) d
WHERE d.agendadas OR d.varridas
ORDER BY d.id <= $after, d.id
LIMIT $limit"
}

#[derive(QueryableByName)]
struct DueRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Bool)]
    agendadas: bool,
    #[diesel(sql_type = Bool)]
    varridas: bool,
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
    /// The next batch of one of the company's due sweeps (the longest due first; a lane whose
    /// batch another worker holds is skipped), leased as a whole until `lease_until`: up to
    /// `limit` requests of the lane after where the pass stands, in id order, each with its
    /// PGCC id and the lane's status, read from `verificacoes_status_varredura_pgcc_idx` alone
    /// (index-only: the consent rows are not read, see below). A sweep with nothing left ends its pass here: the
    /// next is due a period after this one was. Answers one row with no request then, no row
    /// when no sweep was due. `due_at` is the pass's due time shifted by how long it has run, so
    /// that a check's lag is how late its pass started.
    struct ClaimStatusSweep {
        empresa_id: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
        lease_until: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    concat!(
        "WITH faixa AS (
    SELECT w.varredura, w.apos_id
    FROM varreduras_status w
    WHERE w.empresa_id = $empresa_id AND w.proxima_em <= $now
      AND (w.arrendada_ate IS NULL OR w.arrendada_ate <= $now)
    ORDER BY w.proxima_em
    LIMIT 1
    FOR UPDATE SKIP LOCKED
), lote AS (
    -- LATERAL: the lane and where its pass stands bound the index range (a plain join left
    -- `> apos_id` a filter, read from the company's first request at every batch)
    SELECT v.solicitacao_id, v.pgcc_id
    FROM faixa f CROSS JOIN LATERAL (
        SELECT v.solicitacao_id, v.pgcc_id
        FROM verificacoes_status v
        WHERE v.empresa_id = $empresa_id AND v.varredura = f.varredura
          AND v.solicitacao_id > COALESCE(f.apos_id, '00000000-0000-0000-0000-000000000000'::uuid)
        ORDER BY v.solicitacao_id
        LIMIT $limit
    ) v
), resumo AS (
    SELECT count(*) AS n,
           (SELECT l.solicitacao_id FROM lote l ORDER BY l.solicitacao_id DESC LIMIT 1) AS ultimo
    FROM lote
), passo AS (
    UPDATE varreduras_status w SET
        iniciada_em = CASE WHEN w.apos_id IS NULL THEN $now ELSE w.iniciada_em END,
        arrendada_ate = CASE WHEN r.n > 0 THEN $lease_until END,
        ate_id = r.ultimo,
        fim = r.n < $limit,
        proxima_em = CASE WHEN r.n > 0 THEN w.proxima_em
            ELSE GREATEST($now, ",
        utc_plus!("w.proxima_em", "w.periodo_segundos * interval '1 second'"),
        ") END
    FROM faixa f, resumo r
    WHERE w.empresa_id = $empresa_id AND w.varredura = f.varredura
    RETURNING w.varredura, w.periodo_segundos, w.arrendada_ate,
              ",
        utc_plus!("w.proxima_em", "($now - w.iniciada_em)"),
        " AS devida_em
)
-- A request in a lane has the lane's status: it leaves the lane when it reaches a final status
-- (its schedule row goes with the change) or when the PGCC answers an odd status for it (its
-- backoff is its own row again), so a swept request has no unknown status either. A request
-- that changed behind the lane anyway (a row kept from before that rule) is set right by its
-- check: the PGCC's answer is applied from the lane's status, or found already applied. The
-- consent row is read only for a schedule row written before it kept its PGCC id (the
-- `verificacoes_status_pgcc_id` backfill fills those).
SELECT p.varredura, p.arrendada_ate, p.devida_em, p.periodo_segundos AS intervalo_segundos,
       l.solicitacao_id AS id,
       COALESCE(l.pgcc_id, (
           SELECT s.pgcc_id FROM solicitacoes_consentimento s
           WHERE s.id = l.solicitacao_id AND s.empresa_id = $empresa_id)) AS pgcc_id,
       CASE WHEN l.solicitacao_id IS NOT NULL THEN p.varredura END AS status,
       NULL::timestamptz AS status_desconhecido_desde
FROM passo p
LEFT JOIN lote l ON true"
    )
}

statement! {
    /// Moves the company's sweep of `varredura` past the batch leased until `token`: to after
    /// its last request, or, when it was the pass's last batch, to the next pass, due a period
    /// after this one was (at once if the pass ran longer). A lease that ended and was taken
    /// again has another token: left alone.
    struct AdvanceStatusSweep {
        empresa_id: Uuid as SqlUuid,
        varredura: String as Text,
        token: DateTime<Utc> as Timestamptz,
        now: DateTime<Utc> as Timestamptz,
    }
    concat!(
        "UPDATE varreduras_status w SET
    apos_id = CASE WHEN w.fim THEN NULL ELSE w.ate_id END,
    proxima_em = CASE WHEN w.fim
        THEN GREATEST($now, ",
        utc_plus!("w.proxima_em", "w.periodo_segundos * interval '1 second'"),
        ")
        ELSE w.proxima_em END,
    arrendada_ate = NULL, ate_id = NULL, fim = false
WHERE w.empresa_id = $empresa_id AND w.varredura = $varredura AND w.arrendada_ate = $token"
    )
}

statement! {
    /// The schedule after a check, for one company: each listed request's next check by its own
    /// row (`varredura` NULL: due at `proxima_em`), by its company's sweep of `varredura` (its
    /// row due never; the sweep made if the company has none, its first pass due at
    /// `proxima_em`), or its row deleted (`proxima_em` NULL: it reached a final status).
    struct ScheduleStatusChecks {
        empresa_id: Uuid as SqlUuid,
        ids: Vec<Uuid> as Array<SqlUuid>,
        next: Vec<Option<DateTime<Utc>>> as Array<Nullable<Timestamptz>>,
        intervals: Vec<i64> as Array<BigInt>,
        lanes: Vec<Option<String>> as Array<Nullable<Text>>,
    }
    "WITH agenda AS (
    SELECT * FROM unnest($ids::uuid[], $next::timestamptz[], $intervals::bigint[],
                         $lanes::text[])
        AS a(solicitacao_id, proxima_em, intervalo_segundos, varredura)
), encerradas AS (
    DELETE FROM verificacoes_status v USING agenda a
    WHERE v.empresa_id = $empresa_id AND v.solicitacao_id = a.solicitacao_id
      AND a.proxima_em IS NULL
), faixas AS (
    INSERT INTO varreduras_status AS w (empresa_id, varredura, periodo_segundos, proxima_em)
    SELECT DISTINCT ON (a.varredura) $empresa_id, a.varredura, a.intervalo_segundos, a.proxima_em
    FROM agenda a
    WHERE a.varredura IS NOT NULL AND a.proxima_em IS NOT NULL
    ORDER BY a.varredura
    ON CONFLICT (empresa_id, varredura) DO UPDATE SET periodo_segundos = EXCLUDED.periodo_segundos
    WHERE w.periodo_segundos <> EXCLUDED.periodo_segundos
)
UPDATE verificacoes_status v
SET proxima_em = CASE WHEN a.varredura IS NULL THEN a.proxima_em ELSE 'infinity' END,
    intervalo_segundos = a.intervalo_segundos,
    varredura = a.varredura
FROM agenda a
WHERE v.empresa_id = $empresa_id AND v.solicitacao_id = a.solicitacao_id
  AND a.proxima_em IS NOT NULL"
}

statement! {
    /// The backoff of a request whose status the PGCC answered we do not know: its next check,
    /// by its own row (a swept request leaves its sweep, whose batches carry no unknown status;
    /// its first normal answer puts it back).
    struct DeferStatusCheck {
        empresa_id: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        next_check_at: DateTime<Utc> as Timestamptz,
    }
    "UPDATE verificacoes_status SET proxima_em = $next_check_at, varredura = NULL
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
            sweep: None,
        })
    }
}

/// A row of [`ClaimStatusSweep`]: the lease, and a request of its batch (none: the pass ended).
#[derive(QueryableByName)]
struct SweptRow {
    #[diesel(sql_type = Text)]
    varredura: String,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    arrendada_ate: Option<DateTime<Utc>>,
    #[diesel(sql_type = Timestamptz)]
    devida_em: DateTime<Utc>,
    #[diesel(sql_type = BigInt)]
    intervalo_segundos: i64,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    pgcc_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    status: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    status_desconhecido_desde: Option<DateTime<Utc>>,
}

impl SweptRow {
    /// `None` for the row of a pass that ended without a batch.
    fn into_domain(self, company: CompanyId) -> anyhow::Result<Option<StatusCheckItem>> {
        let (Some(id), Some(status), Some(token)) = (self.id, self.status, self.arrendada_ate)
        else {
            return Ok(None);
        };
        let lane = lane_of(&self.varredura)?;
        ClaimedRow {
            id,
            pgcc_id: self.pgcc_id,
            status,
            status_desconhecido_desde: self.status_desconhecido_desde,
            devida_em: self.devida_em,
            intervalo_segundos: self.intervalo_segundos,
        }
        .into_domain(company)
        .map(|item| {
            Some(StatusCheckItem {
                sweep: Some(StatusSweepLease {
                    company_id: company,
                    lane,
                    token,
                }),
                ..item
            })
        })
    }
}

/// The lane's name in `varredura`: the status it sweeps.
fn lane_name(lane: StatusSweepLane) -> &'static str {
    match lane {
        StatusSweepLane::Pending => "pendente",
        StatusSweepLane::Active => "ativo",
    }
}

fn lane_of(name: &str) -> anyhow::Result<StatusSweepLane> {
    match name {
        "pendente" => Ok(StatusSweepLane::Pending),
        "ativo" => Ok(StatusSweepLane::Active),
        _ => Err(anyhow::anyhow!("a status sweep has an unknown lane")),
    }
}

fn companies_with_due(
    pool: &PgPool,
    now: DateTime<Utc>,
    after: Option<CompanyId>,
    limit: u32,
) -> Result<Vec<DueStatusChecks>, RepoError> {
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
        .load::<DueRow>(conn)
    })?;
    Ok(rows
        .into_iter()
        .map(|r| DueStatusChecks {
            company_id: CompanyId(r.id),
            scheduled: r.agendadas,
            swept: r.varridas,
        })
        .collect())
}

/// How many times one claim asks for a sweep batch: a due lane that ends its pass hands out
/// nothing, and the company's other lane may be due too.
const SWEEP_TRIES: usize = 3;

fn claim(
    pool: &PgPool,
    due: DueStatusChecks,
    limit: u32,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
) -> Result<Vec<StatusCheckItem>, RepoError> {
    const OPERATION: &str = "claiming status checks";
    if limit == 0 {
        return Ok(Vec::new());
    }
    let company = due.company_id;
    let unexpected = |e: anyhow::Error| RepoError::Unexpected(e.context(OPERATION));
    let mut claimed = Vec::new();
    // the young checks first (a new request's first check is the freshness that matters
    // most), then the steady ones in the room left
    if due.scheduled {
        let rows = with_conn(pool, OPERATION, |conn| {
            ClaimStatusChecks {
                empresa_id: company.0,
                now,
                lease_until,
                limit: sql_limit(limit),
            }
            .load::<ClaimedRow>(conn)
        })?;
        claimed = rows
            .into_iter()
            .map(|row| row.into_domain(company))
            .collect::<anyhow::Result<Vec<_>>>()
            .map_err(unexpected)?;
    }
    let sweep_tries = if due.swept { SWEEP_TRIES } else { 0 };
    for _ in 0..sweep_tries {
        let room = (limit as usize).saturating_sub(claimed.len());
        if room == 0 {
            break;
        }
        let rows = with_conn(pool, OPERATION, |conn| {
            ClaimStatusSweep {
                empresa_id: company.0,
                now,
                lease_until,
                limit: sql_limit(room as u32),
            }
            .load::<SweptRow>(conn)
        })?;
        if rows.is_empty() {
            break; // no sweep of the company is due
        }
        let before = claimed.len();
        for row in rows {
            claimed.extend(row.into_domain(company).map_err(unexpected)?);
        }
        if claimed.len() > before {
            break; // one batch per claim: the lease is handed back whole
        }
    }
    Ok(claimed)
}

/// One statement per company of `schedules`.
fn schedule(pool: &PgPool, schedules: &[ScheduledStatusCheck]) -> Result<(), RepoError> {
    let mut by_company: BTreeMap<CompanyId, ScheduleStatusChecks> = BTreeMap::new();
    for s in schedules {
        let batch = by_company
            .entry(s.company_id)
            .or_insert_with(|| ScheduleStatusChecks {
                empresa_id: s.company_id.0,
                ids: Vec::new(),
                next: Vec::new(),
                intervals: Vec::new(),
                lanes: Vec::new(),
            });
        let (next, interval, lane) = match s.next {
            NextStatusCheck::At {
                at,
                interval_seconds,
            } => (Some(at), interval_seconds, None),
            NextStatusCheck::Sweep {
                lane,
                period_seconds,
                first_pass_at,
            } => (
                Some(first_pass_at),
                period_seconds,
                Some(lane_name(lane).to_owned()),
            ),
            NextStatusCheck::Never => (None, 0, None),
        };
        batch.ids.push(s.id);
        batch.next.push(next);
        batch.intervals.push(i64::from(interval));
        batch.lanes.push(lane);
    }
    for batch in by_company.into_values() {
        with_conn(pool, "scheduling status checks", |conn| batch.execute(conn))?;
    }
    Ok(())
}

/// One statement per lease.
fn advance_sweeps(
    pool: &PgPool,
    leases: &[StatusSweepLease],
    now: DateTime<Utc>,
) -> Result<(), RepoError> {
    for lease in leases {
        with_conn(pool, "moving a status sweep on", |conn| {
            AdvanceStatusSweep {
                empresa_id: lease.company_id.0,
                varredura: lane_name(lease.lane).to_owned(),
                token: lease.token,
                now,
            }
            .execute(conn)
        })?;
    }
    Ok(())
}

/// Records when the oddity began on the request (once: the row is written only when it has no
/// such record yet) and moves its next check.
fn defer(
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

/// Forgets when the request's odd status began (a write only when it has one).
fn clear_unknown_status(pool: &PgPool, empresa: CompanyId, id: Uuid) -> Result<(), RepoError> {
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
