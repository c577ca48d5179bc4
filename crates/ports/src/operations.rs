//! What the operator's endpoints ask of the world: readiness probes (`GET /health/ready`) and the
//! cheap gauges gathered on each scrape of `GET /metrics` (pool usage, worker backlogs).

use chrono::{DateTime, Utc};

use crate::RepoError;

/// One check of a readiness probe. `detail` is a short sentence for the operator: never a URL
/// with credentials, a query's values or personal data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeReport {
    /// `database`, `migrations`, `pgcc`, ...
    pub name: &'static str,
    pub up: bool,
    /// When false the check is reported but does not make the process unready (the PGCC: a
    /// process that cannot reach it still serves reads).
    pub required: bool,
    pub detail: String,
}

/// Something the service depends on, checked quickly (every check is bounded in time).
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait HealthProbe: Send + Sync {
    /// The checks of this dependency, each with its outcome. Never blocks longer than the
    /// probe's own timeout.
    fn check(&self) -> Vec<ProbeReport>;
}

/// The connection pool as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolState {
    /// Most connections the pool may open.
    pub max_size: u32,
    /// Connections open now (idle or checked out).
    pub connections: u32,
    /// Open connections waiting in the pool.
    pub idle: u32,
}

/// Work the background jobs have not done yet.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Backlog {
    /// Pending or active consent requests whose status check with the PGCC is due.
    pub status_checks_due: i64,
    /// How long the oldest due status check has been due, in seconds (0 when none).
    pub oldest_status_check_due_seconds: f64,
    /// Pending webhook deliveries due now (to URLs neither removed nor disabled).
    pub deliveries_due: i64,
    /// How long the oldest due delivery has been due, in seconds (0 when none).
    pub oldest_delivery_due_seconds: f64,
}

/// Where the reads that may go to a read replica went, and the replicas' state (all zero and
/// empty without replicas).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReadRouting {
    /// Such reads served by the primary (no replica configured or usable).
    pub primary_reads: u64,
    /// Such reads served by a replica.
    pub replica_reads: u64,
    pub replicas: Vec<ReplicaState>,
}

/// One read replica as last measured.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplicaState {
    /// `host:port` (never credentials).
    pub name: String,
    /// How far behind the primary its replay is; `None` when not measured (not answering).
    pub lag: Option<std::time::Duration>,
    /// Answering and within the lag bound: reads go to it.
    pub in_use: bool,
}

/// Gauges read on each scrape; each call is one cheap query or none.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait OperationalStats: Send + Sync {
    /// The connection pool's usage (no query).
    fn pool_state(&self) -> PoolState;

    /// The workers' backlog as of `now` (counts over indexed columns).
    fn backlog(&self, now: DateTime<Utc>) -> Result<Backlog, RepoError>;

    /// Where the lag-tolerant reads went and the replicas' lag (no query).
    fn read_routing(&self) -> ReadRouting {
        ReadRouting::default()
    }

    /// How many companies' batches of each background operation (a purge, the expiry) failed on
    /// their own account since the process started, each skipped while the other companies went
    /// on (no query).
    fn company_batch_failures(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}
