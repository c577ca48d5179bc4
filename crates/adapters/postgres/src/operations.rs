//! The database's side of the operator's endpoints: the readiness probe (reachable with a
//! bounded query; no embedded migration pending) and the gauges of `GET /metrics` (pool usage,
//! worker backlogs).

use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Timestamptz};
use ports::{
    Backlog, HealthProbe, OperationalStats, PoolState, ProbeReport, ReadRouting, RepoError,
};

use crate::conn::with_conn;
use crate::pool::{with_connection_defaults, SessionSettings};
use crate::topology::Topology;
use crate::{PgPool, ReadPools};

/// Readiness of the database on a connection of its own (never the pool's: a readiness check
/// must not wait behind requests, nor take a connection from them): `SELECT 1` under a statement
/// timeout, and no pending embedded migration.
///
/// The connection is taken out while a check runs, so a check stuck on a dead network path
/// holds only that connection: the next check opens a new one (within `connect_timeout`).
pub struct PgReadinessProbe {
    url: String,
    timeout: Duration,
    session: SessionSettings,
    conn: Mutex<Option<PgConnection>>,
}

impl PgReadinessProbe {
    /// `url` is never logged nor put in an error. Its connection is set up like the pool's
    /// (`session`: behind a transaction pooler, no named prepared statement).
    pub fn new(url: &str, timeout: Duration, session: SessionSettings) -> Self {
        let mut url = with_connection_defaults(url);
        if !url.contains("connect_timeout=") {
            // libpq's own bound on opening the connection, whole seconds, at least 2
            let seconds = timeout.as_secs().max(2);
            url.push_str(&format!("&connect_timeout={seconds}"));
        }
        PgReadinessProbe {
            url,
            timeout,
            session,
            conn: Mutex::new(None),
        }
    }

    fn run(&self) -> Result<usize, String> {
        let taken = self
            .conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        let mut conn = match taken {
            Some(conn) => conn,
            None => {
                let mut conn = PgConnection::establish(&self.url)
                    .map_err(|_| "no connection within the probe's timeout".to_owned())?;
                self.session
                    .apply(&mut conn)
                    .map_err(|_| "the new connection could not be set up".to_owned())?;
                conn
            }
        };
        let ms = self.timeout.as_millis().max(1);
        conn.transaction(|conn| {
            diesel::sql_query(format!("SET LOCAL statement_timeout = {ms}")).execute(conn)?;
            diesel::sql_query("SELECT 1").execute(conn)?;
            Ok::<_, diesel::result::Error>(())
        })
        .map_err(|_| "the probe query failed or timed out".to_owned())?;
        let pending = crate::migrations::pending_count(&mut conn)
            .map_err(|_| "migrations: could not read the applied migrations".to_owned())?;
        // kept only after a clean check: a failed one may have left it broken
        *self
            .conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(conn);
        Ok(pending)
    }
}

impl HealthProbe for PgReadinessProbe {
    fn check(&self) -> Vec<ProbeReport> {
        let report = |name, up, detail: String| ProbeReport {
            name,
            up,
            required: true,
            detail,
        };
        match self.run() {
            Ok(0) => vec![
                report("database", true, "reachable".into()),
                report("migrations", true, "up to date".into()),
            ],
            Ok(n) => vec![
                report("database", true, "reachable".into()),
                report("migrations", false, format!("{n} pending")),
            ],
            Err(detail) if detail.starts_with("migrations: ") => vec![
                report("database", true, "reachable".into()),
                report(
                    "migrations",
                    false,
                    detail["migrations: ".len()..].to_owned(),
                ),
            ],
            Err(detail) => vec![
                report("database", false, detail),
                report(
                    "migrations",
                    false,
                    "unknown: the database is not reachable".into(),
                ),
            ],
        }
    }
}

/// Pool usage and worker backlogs, for `GET /metrics`.
pub struct PgOperationalStats {
    pool: PgPool,
    reads: Option<ReadPools>,
    topology: Topology,
}

impl PgOperationalStats {
    pub fn new(pool: PgPool) -> Self {
        PgOperationalStats {
            pool,
            reads: None,
            topology: Topology::default(),
        }
    }

    /// Also reports where the lag-tolerant reads of `reads` went and its replicas' lag.
    pub fn with_reads(mut self, reads: ReadPools) -> Self {
        self.reads = Some(reads);
        self
    }
}

#[derive(QueryableByName)]
struct DueRow {
    #[diesel(sql_type = BigInt)]
    due: i64,
    #[diesel(sql_type = Double)]
    oldest_seconds: f64,
}

/// The most due rows a backlog gauge counts: its cost per scrape is bounded by this, not by the
/// backlog (a million stuck deliveries read a million index entries at every scrape otherwise).
/// The gauge reads this value as "this many or more".
pub const BACKLOG_COUNT_CAP: i64 = 100_000;

/// Young status checks due (their own schedule rows; the sweeps' steady checks show in the lag
/// histogram): counted up to the cap, and the oldest found by one probe of
/// `verificacoes_status_devidas_idx` per company.
static STATUS_CHECKS_DUE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT (SELECT count(*) FROM (
            SELECT 1 FROM verificacoes_status WHERE proxima_em <= $1 LIMIT {BACKLOG_COUNT_CAP}
         ) x) AS due,
        COALESCE((
            SELECT EXTRACT(EPOCH FROM ($1 - min(o.proxima_em)))::float8
            FROM agenda_sincronizacao c CROSS JOIN LATERAL (
                SELECT v.proxima_em FROM verificacoes_status v
                WHERE v.empresa_id = c.empresa_id ORDER BY v.proxima_em LIMIT 1
            ) o
            WHERE o.proxima_em <= $1
        ), 0) AS oldest_seconds"
    )
});

/// Due webhook deliveries (the sender's claim condition: pending, not parked), counted up to
/// the cap. The oldest comes from the sender's own scan of the companies with due deliveries
/// (`delivery_companies.rs`: one probe per company, on one node as on Citus).
static DELIVERIES_DUE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT count(*) AS due FROM (
            SELECT 1 FROM webhook_entregas e
            WHERE e.status = 'pendente' AND NOT e.estacionada AND e.proxima_tentativa_em <= $1
            LIMIT {BACKLOG_COUNT_CAP}
         ) x"
    )
});

/// Seconds from `since` to `now`, to the millisecond, as the status gauge's SQL gives them.
fn seconds_between(since: DateTime<Utc>, now: DateTime<Utc>) -> f64 {
    (now - since).num_milliseconds() as f64 / 1000.0
}

#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = BigInt)]
    due: i64,
}

impl OperationalStats for PgOperationalStats {
    fn pool_state(&self) -> PoolState {
        let state = self.pool.state();
        PoolState {
            max_size: self.pool.max_size(),
            connections: state.connections,
            idle: state.idle_connections,
        }
    }

    fn company_batch_failures(&self) -> Vec<(&'static str, u64)> {
        crate::per_company::company_batch_failures()
    }

    fn read_routing(&self) -> ReadRouting {
        self.reads
            .as_ref()
            .map(ReadPools::routing)
            .unwrap_or_default()
    }

    fn backlog(&self, now: DateTime<Utc>) -> Result<Backlog, RepoError> {
        with_conn(&self.pool, "reading the workers' backlog", |conn| {
            let checks = diesel::sql_query(STATUS_CHECKS_DUE.as_str())
                .bind::<Timestamptz, _>(now)
                .get_result::<DueRow>(conn)?;
            let deliveries = diesel::sql_query(DELIVERIES_DUE.as_str())
                .bind::<Timestamptz, _>(now)
                .get_result::<CountRow>(conn)?;
            Ok((checks, deliveries.due))
        })
        .and_then(|(checks, deliveries_due)| {
            let oldest = crate::delivery_companies::companies_pending(
                &self.pool,
                &self.topology,
                Some(now),
                "reading the workers' backlog",
            )?
            .into_iter()
            .map(|(_, since)| since)
            .min();
            Ok(Backlog {
                status_checks_due: checks.due,
                oldest_status_check_due_seconds: checks.oldest_seconds.max(0.0),
                deliveries_due,
                oldest_delivery_due_seconds: oldest
                    .map_or(0.0, |since| seconds_between(since, now))
                    .max(0.0),
            })
        })
    }
}
