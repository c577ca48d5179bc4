//! The companies with pending webhook deliveries, found without reading their rows: the
//! sender's `companies_due` and the cap's `companies_with_pending`.
//!
//! On one PostgreSQL node each is a loose index scan (a recursive CTE): one index probe per
//! company with pending deliveries, whatever their number (issue 21). Citus refuses a recursive
//! CTE over a distributed table without a filter on the distribution column, and any rewrite it
//! accepts costs more: an aggregate reads every pending row, a walk of the companies probes
//! each of them. So on Citus the same scan runs on each shard, through Citus's own
//! `run_command_on_shards` (`%1$s` is the shard's table): per shard the cost is the scan's on
//! one node, and each shard answers one JSON array.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Bool, Nullable, Timestamptz, Uuid as SqlUuid};
use ports::RepoError;
use uuid::Uuid;

use crate::conn::with_conn;
use crate::topology::Topology;
use crate::PgPool;

/// The loose index scan in `$table` (a table name, or `%1$s` for a shard's): the companies with
/// pending deliveries, each with its soonest due time. `$parked` is `"AND NOT e.estacionada"`
/// (along `webhook_entregas_devidas_empresa_idx`) or `""` (parked included, along
/// `webhook_entregas_pendentes_empresa_idx`). Each step jumps to the first entry of the next
/// company, which is that company's soonest due time.
macro_rules! pending_scan {
    ($table:literal, $parked:literal) => {
        concat!(
            "WITH RECURSIVE empresas_pendentes AS (
    (SELECT e.empresa_id, e.proxima_tentativa_em
     FROM ",
            $table,
            " e
     WHERE e.status = 'pendente' ",
            $parked,
            "
     ORDER BY e.empresa_id, e.proxima_tentativa_em
     LIMIT 1)
    UNION ALL
    SELECT n.empresa_id, n.proxima_tentativa_em
    FROM empresas_pendentes p
    CROSS JOIN LATERAL (
        SELECT e.empresa_id, e.proxima_tentativa_em
        FROM ",
            $table,
            " e
        WHERE e.status = 'pendente' ",
            $parked,
            " AND e.empresa_id > p.empresa_id
        ORDER BY e.empresa_id, e.proxima_tentativa_em
        LIMIT 1
    ) n
)"
        )
    };
}

/// The scan run on every shard of `webhook_entregas`; per shard one row: whether it answered,
/// and its companies as a JSON array of `{empresa_id, desde}` objects.
macro_rules! on_every_shard {
    ($parked:literal) => {
        concat!(
            "SELECT r.success AS respondeu, (j->>'empresa_id')::uuid AS empresa_id,
       (j->>'desde')::timestamptz AS desde
FROM run_command_on_shards('webhook_entregas', $shard$
SELECT coalesce(json_agg(x), '[]')::text FROM (
",
            pending_scan!("%1$s", $parked),
            "
SELECT empresa_id, proxima_tentativa_em AS desde FROM empresas_pendentes) x
$shard$) r
LEFT JOIN LATERAL json_array_elements(CASE WHEN r.success THEN r.result::json END) j ON true"
        )
    };
}

/// `companies_due`: the companies with pending, not parked, deliveries due at $1, with the
/// soonest due time of each. A read, no lock.
const COMPANIES_DUE: &str = concat!(
    pending_scan!("webhook_entregas", "AND NOT e.estacionada"),
    "
SELECT empresa_id, proxima_tentativa_em AS desde
FROM empresas_pendentes
WHERE proxima_tentativa_em <= $1"
);

/// `COMPANIES_DUE` on Citus, shard by shard; a shard that did not answer gives one row with
/// `respondeu` false.
const COMPANIES_DUE_ON_SHARDS: &str = concat!(
    on_every_shard!("AND NOT e.estacionada"),
    "
WHERE NOT r.success OR (j->>'desde')::timestamptz <= $1"
);

/// `companies_with_pending`: the companies with pending deliveries, parked included.
const COMPANIES_WITH_PENDING: &str = concat!(
    pending_scan!("webhook_entregas", ""),
    "
SELECT empresa_id, proxima_tentativa_em AS desde FROM empresas_pendentes"
);

/// `COMPANIES_WITH_PENDING` on Citus, shard by shard.
const COMPANIES_WITH_PENDING_ON_SHARDS: &str = concat!(
    on_every_shard!(""),
    "
WHERE NOT r.success OR j IS NOT NULL"
);

#[derive(QueryableByName)]
struct CompanyRow {
    #[diesel(sql_type = SqlUuid)]
    empresa_id: Uuid,
    #[diesel(sql_type = Timestamptz)]
    desde: DateTime<Utc>,
}

#[derive(QueryableByName)]
struct ShardRow {
    #[diesel(sql_type = Bool)]
    respondeu: bool,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    empresa_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    desde: Option<DateTime<Utc>>,
}

/// The companies with pending deliveries (not parked, due at `due_at`; or, without it, every
/// pending one), each with its soonest due time.
pub(crate) fn companies_pending(
    pool: &PgPool,
    topology: &Topology,
    due_at: Option<DateTime<Utc>>,
    operation: &'static str,
) -> Result<Vec<(Uuid, DateTime<Utc>)>, RepoError> {
    if !topology.distributed(pool)? {
        let rows = with_conn(pool, operation, |conn| match due_at {
            Some(now) => diesel::sql_query(COMPANIES_DUE)
                .bind::<Timestamptz, _>(now)
                .load::<CompanyRow>(conn),
            None => diesel::sql_query(COMPANIES_WITH_PENDING).load::<CompanyRow>(conn),
        })?;
        return Ok(rows.into_iter().map(|r| (r.empresa_id, r.desde)).collect());
    }
    let rows = with_conn(pool, operation, |conn| match due_at {
        Some(now) => diesel::sql_query(COMPANIES_DUE_ON_SHARDS)
            .bind::<Timestamptz, _>(now)
            .load::<ShardRow>(conn),
        None => diesel::sql_query(COMPANIES_WITH_PENDING_ON_SHARDS).load::<ShardRow>(conn),
    })?;
    // A shard that did not answer fails the whole scan: the round is retried, rather than its
    // companies silently skipped.
    if rows.iter().any(|r| !r.respondeu) {
        return Err(RepoError::Unavailable(anyhow::anyhow!(
            "{operation}: a shard of webhook_entregas did not answer"
        )));
    }
    Ok(rows
        .into_iter()
        .filter_map(|r| Some((r.empresa_id?, r.desde?)))
        .collect())
}
