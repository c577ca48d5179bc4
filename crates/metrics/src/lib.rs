//! The Prometheus registry of the process and its text exposition (OpenMetrics): one
//! [`Metrics`] per process, built by the binary's process context and handed to the HTTP layer
//! (which renders it at `GET /metrics` and counts its requests), the PGCC decorator and the
//! background jobs.
//!
//! Series (prefix `consent_api_`):
//! - `http_requests_total{route,method,status,company}`: `route` is the matched pattern
//!   (`/api/solicitacao-consentimento/{id}`), `unmatched` when no route matched; `company` the
//!   caller's company id once its key resolved, else `none`;
//! - `http_request_duration_seconds{route,method}` (histogram);
//! - `pgcc_calls_total{operation,outcome}`, `pgcc_call_duration_seconds{operation}` (histogram);
//! - `db_pool_max_connections`, `db_pool_connections`, `db_pool_idle_connections`;
//! - `db_reads_total{target="primary"|"replica"}`: the reads that may go to a read replica (the
//!   use-case list, the consent list, the events feed), by where they went;
//!   `db_replica_lag_seconds{replica}` (each replica's replay lag as last measured; absent until
//!   measured, kept at its last value while the replica does not answer) and
//!   `db_replica_in_use{replica}` (1 when answering within `database.max_replica_lag_ms`);
//! - `status_check_lag_seconds` (histogram): how late each status check ran against its due
//!   time (the freshness a company gets, docs/lifecycle.md);
//! - `status_checks_due`, `status_check_oldest_due_seconds`, `webhook_deliveries_due`,
//!   `webhook_delivery_oldest_due_seconds`, `backlog_read_errors_total` (read on each scrape; the
//!   counts stop at 100,000 so that a scrape's cost never follows the backlog, the oldest are
//!   exact);
//! - `use_case_sync_results_total{outcome="success"|"failure"}` (scheduled syncs, per company);
//! - `worker_item_failures_total{job}`: items a background round could not handle on their own
//!   account (`status_poll`, `reconcile`): each is logged, skipped and tried again later while
//!   the round goes on with the others;
//! - `company_batch_failures_total{operation}`: a company's batch of a per-company background
//!   operation (a purge, the expiry) that failed on its own account: logged by company id,
//!   skipped while the other companies go on, its rows due again next round;
//! - `pgcc_unknown_status_total`: answers of the PGCC's batch status naming a status we do not
//!   know, one per request and poll (each such request is skipped and backed off).
//! - `audit_integrity_incidents_total`: integrity incidents the status worker recorded: confirmed
//!   requests the PGCC said it does not know for longer than `workers.reconcile_not_found_seconds`
//!   (docs/auditoria.md, "Integrity incidents"; each also an `auditoria.incidente` event).
//! - `webhook_deliveries_in_flight` and `webhook_senders` (this process's webhook senders: busy,
//!   and how many there are), `webhook_attempts_total{outcome="delivered"|"retried"|"failed"|
//!   "lease_lost"}`;
//! - `webhook_deliveries_dropped_total`: pending deliveries failed without an attempt because
//!   their company was past `webhooks.max_pending_per_company` (their `motivo` says so).

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use application::cache::CacheStats;
use application::jobs::JobObserver;
use application::{Operations, PgccCallObserver, StatusCheckObserver};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;
type Histograms = Family<Labels, Histogram, fn() -> Histogram>;

/// 5 ms to about 40 s.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 14))
}

/// Every series of the process. One per process (shared by the HTTP workers, the background
/// jobs and the PGCC decorator).
pub struct Metrics {
    registry: Registry,
    http_requests: Family<Labels, Counter>,
    http_duration: Histograms,
    pgcc_calls: Family<Labels, Counter>,
    pgcc_duration: Histograms,
    pool_max: Gauge,
    pool_connections: Gauge,
    pool_idle: Gauge,
    db_reads: Family<Labels, Counter>,
    replica_lag: Family<Labels, Gauge<f64, AtomicU64>>,
    replica_in_use: Family<Labels, Gauge>,
    status_check_lag: Histogram,
    status_checks_due: Gauge,
    status_check_oldest: Gauge<f64, AtomicU64>,
    deliveries_due: Gauge,
    delivery_oldest: Gauge<f64, AtomicU64>,
    backlog_errors: Counter,
    sync_results: Family<Labels, Counter>,
    pgcc_unknown_statuses: Counter,
    integrity_incidents: Counter,
    worker_item_failures: Family<Labels, Counter>,
    company_batch_failures: Family<Labels, Counter>,
    cache_lookups: Family<Labels, Counter>,
    cache_entries: Family<Labels, Gauge>,
    cache_weight: Family<Labels, Gauge>,
    cache_in_use: Gauge,
    webhook_in_flight: Gauge,
    webhook_senders: Gauge,
    webhook_attempts: Family<Labels, Counter>,
    webhook_dropped: Counter,
    audit_unwitnessed: Counter,
    audit_last_unwitnessed: Gauge,
    witness_health:
        std::sync::OnceLock<std::sync::Arc<application::audit::witness::submit::WitnessHealth>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("consent_api");
        let m = Metrics {
            registry: Registry::default(),
            http_requests: Family::default(),
            http_duration: Family::new_with_constructor(latency_histogram as fn() -> Histogram),
            pgcc_calls: Family::default(),
            pgcc_duration: Family::new_with_constructor(latency_histogram as fn() -> Histogram),
            pool_max: Gauge::default(),
            pool_connections: Gauge::default(),
            pool_idle: Gauge::default(),
            db_reads: Family::default(),
            replica_lag: Family::default(),
            replica_in_use: Family::default(),
            // 0.5 s to about 2.3 h
            status_check_lag: Histogram::new(exponential_buckets(0.5, 2.0, 15)),
            status_checks_due: Gauge::default(),
            status_check_oldest: Gauge::default(),
            deliveries_due: Gauge::default(),
            delivery_oldest: Gauge::default(),
            backlog_errors: Counter::default(),
            sync_results: Family::default(),
            pgcc_unknown_statuses: Counter::default(),
            integrity_incidents: Counter::default(),
            worker_item_failures: Family::default(),
            company_batch_failures: Family::default(),
            cache_lookups: Family::default(),
            cache_entries: Family::default(),
            cache_weight: Family::default(),
            cache_in_use: Gauge::default(),
            webhook_in_flight: Gauge::default(),
            webhook_senders: Gauge::default(),
            webhook_attempts: Family::default(),
            webhook_dropped: Counter::default(),
            audit_unwitnessed: Counter::default(),
            audit_last_unwitnessed: Gauge::default(),
            witness_health: std::sync::OnceLock::new(),
        };
        registry.register(
            "http_requests",
            "HTTP requests by route template, method, status and company",
            m.http_requests.clone(),
        );
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency by route template and method",
            m.http_duration.clone(),
        );
        registry.register(
            "pgcc_calls",
            "PGCC calls by operation and outcome",
            m.pgcc_calls.clone(),
        );
        registry.register(
            "pgcc_call_duration_seconds",
            "PGCC call latency by operation",
            m.pgcc_duration.clone(),
        );
        registry.register(
            "db_pool_max_connections",
            "Most connections the pool may open",
            m.pool_max.clone(),
        );
        registry.register(
            "db_pool_connections",
            "Open database connections (idle or in use)",
            m.pool_connections.clone(),
        );
        registry.register(
            "db_pool_idle_connections",
            "Open database connections idle in the pool",
            m.pool_idle.clone(),
        );
        registry.register(
            "db_reads",
            "Reads that may go to a read replica, by the target that served them",
            m.db_reads.clone(),
        );
        registry.register(
            "db_replica_lag_seconds",
            "Each read replica's replay lag behind the primary, as last measured",
            m.replica_lag.clone(),
        );
        registry.register(
            "db_replica_in_use",
            "1 when the read replica answers within the lag bound and gets reads, else 0",
            m.replica_in_use.clone(),
        );
        registry.register(
            "status_check_lag_seconds",
            "How late each status check with the PGCC ran against its due time",
            m.status_check_lag.clone(),
        );
        registry.register(
            "status_checks_due",
            "Consent requests whose status check with the PGCC is due",
            m.status_checks_due.clone(),
        );
        registry.register(
            "status_check_oldest_due_seconds",
            "How long the oldest due status check has been due",
            m.status_check_oldest.clone(),
        );
        registry.register(
            "webhook_deliveries_due",
            "Webhook deliveries due now",
            m.deliveries_due.clone(),
        );
        registry.register(
            "webhook_delivery_oldest_due_seconds",
            "How long the oldest due webhook delivery has been due",
            m.delivery_oldest.clone(),
        );
        registry.register(
            "backlog_read_errors",
            "Scrapes whose backlog query failed (the backlog gauges keep their last value)",
            m.backlog_errors.clone(),
        );
        registry.register(
            "use_case_sync_results",
            "Scheduled use-case synchronizations by outcome (one per company)",
            m.sync_results.clone(),
        );
        registry.register(
            "pgcc_unknown_status",
            "Requests for which the PGCC's status answer named a status we do not know (skipped and checked again later)",
            m.pgcc_unknown_statuses.clone(),
        );
        registry.register(
            "audit_integrity_incidents",
            "Integrity incidents recorded: confirmed requests the PGCC said it does not know for longer than workers.reconcile_not_found_seconds",
            m.integrity_incidents.clone(),
        );
        registry.register(
            "worker_item_failures",
            "Items a background round skipped after a failure of their own (logged, tried again later) by job",
            m.worker_item_failures.clone(),
        );
        registry.register(
            "company_batch_failures",
            "A company's batch of a per-company background operation that failed on its own (logged, skipped, due again next round) by operation",
            m.company_batch_failures.clone(),
        );
        registry.register(
            "cache_lookups",
            "In-process cache lookups by cache (api_keys, use_case_lists) and result (hit, miss)",
            m.cache_lookups.clone(),
        );
        registry.register(
            "cache_entries",
            "Entries held by each in-process cache",
            m.cache_entries.clone(),
        );
        registry.register(
            "cache_weight",
            "What each in-process cache holds: bytes (use_case_lists) or entries (api_keys)",
            m.cache_weight.clone(),
        );
        registry.register(
            "cache_in_use",
            "1 while the caches are trusted (enabled, change feed alive), else 0",
            m.cache_in_use.clone(),
        );
        registry.register(
            "webhook_deliveries_in_flight",
            "Webhook deliveries this process is attempting now",
            m.webhook_in_flight.clone(),
        );
        registry.register(
            "webhook_senders",
            "Concurrent webhook senders of this process (webhooks.concurrency)",
            m.webhook_senders.clone(),
        );
        registry.register(
            "webhook_attempts",
            "Webhook delivery attempts of this process by outcome (delivered, retried, failed, lease_lost)",
            m.webhook_attempts.clone(),
        );
        registry.register(
            "webhook_deliveries_dropped",
            "Pending webhook deliveries failed without an attempt: their company was past webhooks.max_pending_per_company",
            m.webhook_dropped.clone(),
        );
        registry.register(
            "audit_checkpoints_unwitnessed",
            "Checkpoints this process's checkpoint job kept without any witness's cosignature although witnesses are configured (docs/auditoria.md, Witnesses)",
            m.audit_unwitnessed.clone(),
        );
        registry.register(
            "audit_last_checkpoint_unwitnessed",
            "1 when the last checkpoint this process kept lacked every witness's cosignature",
            m.audit_last_unwitnessed.clone(),
        );
        Metrics { registry, ..m }
    }

    /// Reports, from now on, how the witnesses answered this process's checkpoint job.
    pub fn watch_witnesses(
        &self,
        health: std::sync::Arc<application::audit::witness::submit::WitnessHealth>,
    ) {
        let _ = self.witness_health.set(health);
    }

    /// The webhook sender pool's size, set once at start.
    pub fn webhook_senders(&self, senders: u32) {
        self.webhook_senders.set(i64::from(senders));
    }

    /// A webhook attempt started (`+1`) or ended (`-1`).
    pub fn webhook_in_flight(&self, delta: i64) {
        self.webhook_in_flight.inc_by(delta);
    }

    /// One webhook attempt ended with `outcome` (`delivered`, `retried`, `failed`, `lease_lost`).
    pub fn webhook_attempt(&self, outcome: &'static str) {
        self.webhook_attempts
            .get_or_create(&vec![("outcome", outcome.to_owned())])
            .inc();
    }

    /// One answered HTTP request.
    pub fn http_request(
        &self,
        route: &str,
        method: &str,
        status: u16,
        company: Option<&str>,
        elapsed: Duration,
    ) {
        self.http_requests
            .get_or_create(&vec![
                ("route", route.to_owned()),
                ("method", method.to_owned()),
                ("status", status.to_string()),
                ("company", company.unwrap_or("none").to_owned()),
            ])
            .inc();
        self.http_duration
            .get_or_create(&vec![
                ("route", route.to_owned()),
                ("method", method.to_owned()),
            ])
            .observe(elapsed.as_secs_f64());
    }

    /// Reads the gauges of `operations` (pool, backlog) and encodes every series.
    pub fn gather(&self, operations: &Operations) -> String {
        if let Some(pool) = operations.pool_state() {
            self.pool_max.set(i64::from(pool.max_size));
            self.pool_connections.set(i64::from(pool.connections));
            self.pool_idle.set(i64::from(pool.idle));
        }
        for (operation, total) in operations.company_batch_failures() {
            let counter = self
                .company_batch_failures
                .get_or_create(&vec![("operation", operation.to_owned())]);
            counter.inc_by(total.saturating_sub(counter.get()));
        }
        if let Some(routing) = operations.read_routing() {
            for (target, total) in [
                ("primary", routing.primary_reads),
                ("replica", routing.replica_reads),
            ] {
                let counter = self
                    .db_reads
                    .get_or_create(&vec![("target", target.to_owned())]);
                counter.inc_by(total.saturating_sub(counter.get()));
            }
            for replica in routing.replicas {
                let labels = vec![("replica", replica.name)];
                if let Some(lag) = replica.lag {
                    self.replica_lag
                        .get_or_create(&labels)
                        .set(lag.as_secs_f64());
                }
                self.replica_in_use
                    .get_or_create(&labels)
                    .set(i64::from(replica.in_use));
            }
        }
        if let Some(health) = self.witness_health.get() {
            let total = health.unwitnessed_checkpoints();
            self.audit_unwitnessed
                .inc_by(total.saturating_sub(self.audit_unwitnessed.get()));
            self.audit_last_unwitnessed
                .set(i64::from(health.last_unwitnessed()));
        }
        match operations.backlog() {
            Some(Ok(backlog)) => {
                self.status_checks_due.set(backlog.status_checks_due);
                self.status_check_oldest
                    .set(backlog.oldest_status_check_due_seconds);
                self.deliveries_due.set(backlog.deliveries_due);
                self.delivery_oldest
                    .set(backlog.oldest_delivery_due_seconds);
            }
            Some(Err(e)) => {
                self.backlog_errors.inc();
                tracing::warn!(error = format!("{e:#}"), "metrics: backlog not readable");
            }
            None => {}
        }
        self.encode()
    }

    /// Copies the cache counters (the services' and the HTTP layer's, by cache name) into their
    /// series; `in_use`: whether the caches are trusted now.
    pub fn caches(&self, caches: &[(&'static str, CacheStats)], in_use: bool) {
        for &(cache, ref stats) in caches {
            for (result, total) in [("hit", stats.hits), ("miss", stats.misses)] {
                let counter = self.cache_lookups.get_or_create(&vec![
                    ("cache", cache.to_owned()),
                    ("result", result.to_owned()),
                ]);
                counter.inc_by(total.saturating_sub(counter.get()));
            }
            let labels = vec![("cache", cache.to_owned())];
            self.cache_entries
                .get_or_create(&labels)
                .set(i64::try_from(stats.entries).unwrap_or(i64::MAX));
            self.cache_weight
                .get_or_create(&labels)
                .set(i64::try_from(stats.weight).unwrap_or(i64::MAX));
        }
        self.cache_in_use.set(i64::from(in_use));
    }

    /// The text exposition of every series, as they are.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}

impl JobObserver for Metrics {
    /// Pending deliveries failed by the cap of pending deliveries per company.
    fn webhook_deliveries_dropped(&self, count: u64) {
        self.webhook_dropped.inc_by(count);
    }

    /// Results of a scheduled synchronization round.
    fn sync_results(&self, succeeded: u64, failed: u64) {
        self.sync_results
            .get_or_create(&vec![("outcome", "success".to_owned())])
            .inc_by(succeeded);
        self.sync_results
            .get_or_create(&vec![("outcome", "failure".to_owned())])
            .inc_by(failed);
    }

    /// Requests a status poll skipped because the PGCC named a status we do not know.
    fn pgcc_unknown_statuses(&self, count: u64) {
        self.pgcc_unknown_statuses.inc_by(count);
    }

    /// Integrity incidents recorded by a status round.
    fn integrity_incidents(&self, count: u64) {
        self.integrity_incidents.inc_by(count);
    }

    /// `count` items of one round of `job` failed on their own account.
    fn worker_item_failures(&self, job: &'static str, count: u64) {
        self.worker_item_failures
            .get_or_create(&vec![("job", job.to_owned())])
            .inc_by(count);
    }
}

impl StatusCheckObserver for Metrics {
    fn status_check_lag(&self, seconds: f64) {
        self.status_check_lag.observe(seconds);
    }
}

impl PgccCallObserver for Metrics {
    fn pgcc_call(&self, operation: &'static str, outcome: &'static str, elapsed: Duration) {
        self.pgcc_calls
            .get_or_create(&vec![
                ("operation", operation.to_owned()),
                ("outcome", outcome.to_owned()),
            ])
            .inc();
        self.pgcc_duration
            .get_or_create(&vec![("operation", operation.to_owned())])
            .observe(elapsed.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_carry_their_labels_in_the_text_format() {
        let m = Metrics::new();
        m.http_request(
            "/api/solicitacao-consentimento/{id}",
            "GET",
            200,
            Some("c1"),
            Duration::from_millis(12),
        );
        m.pgcc_call("create_consent_request", "timeout", Duration::from_secs(2));
        m.sync_results(3, 1);
        let before = m.encode();
        assert!(
            before.contains("consent_api_pgcc_unknown_status_total 0"),
            "listed before the first oddity: {before}"
        );
        m.pgcc_unknown_statuses(2);
        let text = m.encode();
        assert!(text.contains(
            "consent_api_http_requests_total{route=\"/api/solicitacao-consentimento/{id}\",method=\"GET\",status=\"200\",company=\"c1\"} 1"
        ), "{text}");
        assert!(text.contains("consent_api_http_request_duration_seconds_bucket{"));
        assert!(text.contains(
            "consent_api_pgcc_calls_total{operation=\"create_consent_request\",outcome=\"timeout\"} 1"
        ));
        assert!(text.contains("consent_api_use_case_sync_results_total{outcome=\"failure\"} 1"));
        assert!(text.contains("consent_api_db_pool_connections"));
        assert!(
            text.contains("consent_api_pgcc_unknown_status_total 2"),
            "{text}"
        );
    }
}
